# builtins handed to a library callback: pandas calls eval on each value, so
# the library's frame is eval's caller; the string is still the job's code,
# and what it does (a process here) is stopped whoever evaluates it.
import pandas as pd


def main():
    try:
        out = pd.Series(["__import__('o' + 's').system('id')"]).apply(eval)
    except Exception as e:
        out = repr(e)
    return str(out)
