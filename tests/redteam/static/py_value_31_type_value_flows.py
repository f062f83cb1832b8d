# family: unbound-method — type(x) handed on as a value: the receiver there may be the class, so the property's getter takes numpy as self
import numpy


class A:
    def __init__(self):
        self._core = 1

    @property
    def value(self):
        return self._core


def reach(k):
    return k.value.fget(numpy)


reach(type(A()))
