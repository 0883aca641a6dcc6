// A fixture for the C# golden test.
using System;
using System.Collections.Generic;

namespace Example.Shapes
{
    /// <summary>Shape is anything with an area.</summary>
    public interface IShape
    {
        /// <summary>Area returns the area.</summary>
        double Area();
        string Name { get; }
    }

    /// <summary>
    /// Rect is a rectangle.
    /// </summary>
    public class Rect : IShape
    {
        public const int Limit = 10;
        private readonly double w, h;

        public Rect(double w, double h)
        {
            this.w = w;
            this.h = h;
        }

        public string Name => "rect";

        public double Area() => w * h;

        public static T Largest<T>(List<T> xs) where T : IComparable<T>
        {
            T best = xs[0];
            foreach (var x in xs)
            {
                if (x.CompareTo(best) > 0) best = x;
            }
            return best;
        }

        public event EventHandler Changed;
    }

    public struct Point
    {
        public int X;
        public int Y;
    }

    public enum Color { Red, Green = 2 }

    public record Pair(int A, int B);

    public delegate void Handler(object sender);
}
