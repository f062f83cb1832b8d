import math
from abc import ABC, abstractmethod


class Shape(ABC):
    @abstractmethod
    def area(self) -> float:
        ...

    def describe(self) -> str:
        return f"{type(self).__name__} with area {self.area():.2f}"


class Circle(Shape):
    def __init__(self, r):
        self._r = r

    def area(self):
        return math.pi * self._r ** 2


class Rect(Shape):
    def __init__(self, w, h):
        self._w, self._h = w, h

    def area(self):
        return self._w * self._h

    @property
    def ratio(self):
        return self._w / self._h

    @ratio.setter
    def ratio(self, value):
        self._w = self._h * value


shapes = [Circle(1), Rect(2, 3)]
print([s.describe() for s in sorted(shapes, key=lambda s: s.area())])
