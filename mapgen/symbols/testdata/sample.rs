//! A fixture for the Rust golden test.
use std::fmt;

/// LIMIT is how many shapes fit.
pub const LIMIT: usize = 10;

static mut COUNTER: u32 = 0;

/// Shape is anything with an area.
pub trait Shape {
    /// area returns the area.
    fn area(&self) -> f64;
    fn name(&self) -> String {
        String::from("shape")
    }
}

/// Rect is a rectangle.
#[derive(Debug, Clone)]
pub struct Rect {
    /// width
    pub w: f64,
    h: f64,
}

pub enum Color {
    Red,
    Rgb(u8, u8, u8),
}

pub type Pair<T> = (T, T);

impl Rect {
    /// new makes a rectangle.
    pub fn new(w: f64, h: f64) -> Self {
        Rect { w, h }
    }
}

impl Shape for Rect {
    fn area(&self) -> f64 {
        self.w * self.h
    }
}

impl<T: fmt::Debug> fmt::Display for Wrapper<T> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

pub struct Wrapper<T>(T);

macro_rules! square {
    ($x:expr) => {
        $x * $x
    };
}

pub mod geometry {
    pub fn origin() -> (f64, f64) {
        (0.0, 0.0)
    }
}

// register adds a shape.
pub fn register<S: Shape>(s: &S) -> f64 {
    let local = s.area();
    square!(local) + LIMIT as f64
}
