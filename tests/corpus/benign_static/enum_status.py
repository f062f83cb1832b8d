from enum import Enum, auto
from typing import Dict


class Status(Enum):
    PENDING = auto()
    RUNNING = auto()
    DONE = auto()

    @classmethod
    def parse(cls, s: str) -> "Status":
        return cls[s.strip().upper()]


def tally(values) -> Dict[str, int]:
    out: Dict[str, int] = {s.name: 0 for s in Status}
    for v in values:
        out[Status.parse(v).name] += 1
    return out


print(tally(["pending", "done", "Done", "running"]))
