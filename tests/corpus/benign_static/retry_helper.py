import time
import random


class RetryError(Exception):
    pass


def retry(fn, attempts=3, base=0.001):
    last = None
    for i in range(attempts):
        try:
            return fn()
        except ValueError as e:
            last = e
            time.sleep(base * (2 ** i))
    raise RetryError(str(last))


state = {"n": 0}


def flaky():
    state["n"] += 1
    if state["n"] < 3:
        raise ValueError("not yet")
    return random.randint(1, 1)


print(retry(flaky), state)
