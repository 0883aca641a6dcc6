// A fixture for the Java golden test.
package com.example.shapes;

import java.util.List;

/** Shape is anything with an area. */
public interface Shape {
    /** LIMIT is how many shapes fit. */
    int LIMIT = 10;

    double area();
}

/**
 * Rect is a rectangle.
 */
@SuppressWarnings("unused")
class Rect implements Shape {
    private final double w, h;
    static int count = 0;

    /** Rect makes a rectangle. */
    Rect(double w, double h) {
        this.w = w;
        this.h = h;
    }

    @Override
    public double area() {
        return w * h;
    }

    static <T extends Shape> double total(List<T> shapes) {
        double sum = 0;
        for (T s : shapes) {
            sum += s.area();
        }
        return sum + LIMIT;
    }

    enum Color {
        RED,
        GREEN;

        Color next() {
            return GREEN;
        }
    }

    record Point(int x, int y) {}
}

@interface Marker {
    String value() default "";
}
