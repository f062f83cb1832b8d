from typing import Iterator, List, TypeVar

T = TypeVar("T")


def chunks(seq: List[T], size: int) -> Iterator[List[T]]:
    for i in range(0, len(seq), size):
        yield seq[i:i + size]


total = 0
for part in chunks(list(range(23)), 5):
    total += sum(part)
print(total, [len(c) for c in chunks(list(range(23)), 5)])
