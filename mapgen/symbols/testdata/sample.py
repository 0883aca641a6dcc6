"""A fixture for the outline golden test."""
import os

LIMIT = 10


class Base:
    """Base shape."""

    kind = "base"

    def area(self) -> float:
        """Return the area."""
        return 0.0


@dataclass
class Rect(Base):
    w: float
    h: float

    def area(self) -> float:
        return self.w * self.h

    @property
    def label(self):
        def inner(x):
            return x
        return inner(os.path.join("a", "b"))


def register(name, shape=None, *args, **kwargs):
    '''Register a shape.'''
    if shape is None:
        raise ValueError(name)
    return Rect(1, 2).area() + LIMIT


A, B = 1, 2
from .pkg import thing
