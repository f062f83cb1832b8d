# the runner's frames under the job's, read through a library's frame helper
# (inspect.currentframe runs sys._getframe in inspect's own frame): no local
# of any of them may hold the guard's module (its globals are what the
# checks read). No effect: the job succeeds with an empty list.
import pandas


def main():
    frame = pandas.core.common.inspect.currentframe()
    found = []
    while frame is not None:
        for key, value in list(frame.f_locals.items()):
            items = value if type(value) is tuple else (value,)
            for item in items:
                if type(item) is type(pandas) and "guard" in item.__name__:
                    found.append(key)
        frame = frame.f_back
    return found
