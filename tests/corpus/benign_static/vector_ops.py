import math


class Vector:
    __slots_note__ = "plain attributes"

    def __init__(self, *coords):
        self._coords = tuple(float(c) for c in coords)

    def __len__(self):
        return len(self._coords)

    def __add__(self, other):
        if not isinstance(other, Vector) or len(other) != len(self):
            return NotImplemented
        return Vector(*(a + b for a, b in zip(self._coords, other._coords)))

    def dot(self, other):
        if isinstance(other, Vector):
            return sum(a * b for a, b in zip(self._coords, other._coords))
        raise TypeError("dot needs a Vector")

    def __eq__(self, other):
        return isinstance(other, Vector) and self._coords == other._coords

    def norm(self):
        return math.sqrt(self.dot(self))

    def __repr__(self):
        return "Vector(%s)" % ", ".join(f"{c:g}" for c in self._coords)


a, b = Vector(1, 2, 2), Vector(3, 0, 4)
print(a + b, a.dot(b), a.norm(), a == Vector(1, 2, 2))
