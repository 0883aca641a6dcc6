// A fixture for the TypeScript golden test.
import { readFile } from "fs";

/** Limit is how many shapes fit. */
export const LIMIT = 10;

let counter = 0;

/** Shape is anything with an area. */
export interface Shape {
  /** The shape's name. */
  name: string;
  area(): number;
}

export type Pair<T> = [T, T];

export enum Color {
  Red,
  Green = "green",
}

/**
 * Rect is a rectangle.
 * It has a width and a height.
 */
export class Rect implements Shape {
  name = "rect";
  private readonly w: number;

  constructor(w: number, private h: number) {
    this.w = w;
  }

  area(): number {
    return this.w * this.h;
  }

  static unit(): Rect {
    return new Rect(1, 1);
  }
}

export abstract class Base {
  abstract describe(): string;
}

// register adds a shape.
export function register(s: Shape, tags: string[] = []): number {
  const local = s.area();
  counter += local;
  return counter + LIMIT;
}

export const scale = (s: Shape, k: number): number => s.area() * k;

namespace Geometry {
  export function origin(): Pair<number> {
    return [0, 0];
  }
}

async function* walk(dir: string) {
  yield await readFile(dir);
}
