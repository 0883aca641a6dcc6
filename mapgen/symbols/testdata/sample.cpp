// A fixture for the C++ golden test.
#include <string>
#include <vector>

namespace shapes {

/// Shape is anything with an area.
class Shape {
public:
    virtual ~Shape() = default;
    /// area returns the area.
    virtual double area() const = 0;
    std::string name;
};

// Rect is a rectangle.
class Rect : public Shape {
public:
    Rect(double w, double h) : w_(w), h_(h) {}
    double area() const override;
    static Rect unit() { return Rect(1, 1); }

private:
    double w_, h_;
};

double Rect::area() const {
    return w_ * h_;
}

template <typename T>
struct Pair {
    T first;
    T second;
};

template <typename T>
T largest(const std::vector<T>& xs) {
    T best = xs[0];
    for (const T& x : xs) {
        if (x > best) best = x;
    }
    return best;
}

using Names = std::vector<std::string>;

enum class Color { Red, Green };

constexpr int kLimit = 10;

}  // namespace shapes

int main() {
    shapes::Rect r(2, 3);
    return static_cast<int>(r.area()) + shapes::kLimit;
}
