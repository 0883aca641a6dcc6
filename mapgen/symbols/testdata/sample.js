// A fixture for the JavaScript golden test.
const path = require("path");

/** LIMIT is how many shapes fit. */
const LIMIT = 10;
var legacy = 1;

/**
 * Rect is a rectangle.
 */
class Rect {
  name = "rect";

  constructor(w, h) {
    this.w = w;
    this.h = h;
  }

  // area returns the area.
  area() {
    return this.w * this.h;
  }

  get label() {
    return path.join("rect", String(this.area()));
  }

  static unit() {
    return new Rect(1, 1);
  }
}

function register(shape, ...tags) {
  const inner = () => shape.area();
  return inner() + LIMIT;
}

export const scale = (s, k) => s.area() * k;

export default function* ids() {
  yield 1;
}

module.exports = { Rect, register };
