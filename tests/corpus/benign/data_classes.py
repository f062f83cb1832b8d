# dataclasses, typing, enum, functools, collections: all use exec/compile or
# sys._getframe internally.
import collections
import dataclasses
import enum
import functools
import typing


@dataclasses.dataclass(frozen=True)
class Point:
    x: int
    y: int = 0


class Pair(typing.NamedTuple):
    a: int
    b: str


Color = enum.Enum("Color", "RED GREEN")
T = typing.TypeVar("T")
Row = collections.namedtuple("Row", "k v")


@functools.lru_cache(maxsize=None)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def main():
    return [Point(1).y, Pair(2, "b").b, Color.GREEN.value, Row(1, 2).v, fib(30),
            dataclasses.asdict(Point(3, 4))]
