# A fixture for the Ruby golden test.
require "set"

# LIMIT is how many shapes fit.
LIMIT = 10

# Shapes groups the shapes.
module Shapes
  VERSION = "1.0"

  # Rect is a rectangle.
  class Rect < Base
    attr_reader :w, :h

    # initialize makes a rectangle.
    def initialize(w, h)
      @w = w
      @h = h
    end

    def area
      w * h
    end

    def self.unit
      new(1, 1)
    end

    def <=>(other)
      area <=> other.area
    end
  end

  def self.register(shape, *tags, **opts)
    local = shape.area
    local + LIMIT
  end

  def helper; end
end

def top_level(x = 1)
  Shapes::Rect.new(x, x).area
end
