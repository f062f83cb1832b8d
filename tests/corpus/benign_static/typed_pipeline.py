from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, List, Protocol


class Step(Protocol):
    def __call__(self, rows: List[dict]) -> List[dict]: ...


@dataclass(frozen=True)
class Pipeline:
    steps: tuple

    def run(self, rows: Iterable[dict]) -> List[dict]:
        out = list(rows)
        for step in self.steps:
            out = step(out)
        return out


def drop_empty(rows: List[dict]) -> List[dict]:
    return [r for r in rows if any(v not in (None, "") for v in r.values())]


def lower_keys(rows: List[dict]) -> List[dict]:
    return [{k.lower(): v for k, v in r.items()} for r in rows]


def make(*fns: Callable[[List[dict]], List[dict]]) -> Pipeline:
    return Pipeline(tuple(fns))


print(make(drop_empty, lower_keys).run([{"A": 1}, {"B": None}, {"C": ""}]))
