import functools
import hashlib


class Tokenizer:
    _registry = {}

    def __init__(self, lower: bool = True):
        self._lower = lower
        self._cache = {}
        Tokenizer._registry[id(self)] = self

    def _normalise(self, text: str) -> str:
        return text.lower() if self._lower else text

    def tokens(self, text: str):
        key = hashlib.sha1(text.encode("utf-8")).hexdigest()
        if key not in self._cache:
            self._cache[key] = self._normalise(text).split()
        return self._cache[key]

    @classmethod
    def count(cls) -> int:
        return len(cls._registry)

    def __repr__(self):
        return f"Tokenizer(lower={self._lower})"


@functools.lru_cache(maxsize=128)
def fib(n: int) -> int:
    return n if n < 2 else fib(n - 1) + fib(n - 2)


t = Tokenizer()
print(t.tokens("Hello World hello"), Tokenizer.count(), t, fib(20))
