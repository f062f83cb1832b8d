import functools

@functools.lru_cache(maxsize=None)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

try:
    pass
except (ValueError, TypeError) as e:
    raise RuntimeError("x") from e
finally:
    del fib
