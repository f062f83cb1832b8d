import functools
import time


def timed(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            wrapper.calls += 1
            wrapper.elapsed += time.perf_counter() - start
    wrapper.calls = 0
    wrapper.elapsed = 0.0
    return wrapper


@timed
def slow_sum(n):
    return sum(i * i for i in range(n))


print(slow_sum(10000), slow_sum.calls, slow_sum.__name__)
