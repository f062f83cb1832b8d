import heapq
import itertools
from dataclasses import dataclass, field
from enum import Enum


class Status(Enum):
    PENDING = "pending"
    DONE = "done"


@dataclass(order=True)
class Task:
    priority: int
    seq: int
    name: str = field(compare=False)
    status: Status = field(default=Status.PENDING, compare=False)


class TaskQueue:
    def __init__(self):
        self._heap = []
        self._counter = itertools.count()
        self._done = []

    def push(self, name, priority=5):
        heapq.heappush(self._heap, Task(priority, next(self._counter), name))
        return self

    def run_next(self):
        task = heapq.heappop(self._heap)
        task.status = Status.DONE
        self._done.append(task)
        return task

    def __len__(self):
        return len(self._heap)


q = TaskQueue().push("report", 2).push("email").push("backup", 1)
while len(q):
    t = q.run_next()
    print(t.name, t.status.value)
