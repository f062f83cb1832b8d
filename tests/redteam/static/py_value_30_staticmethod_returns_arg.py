# family: capability-by-value — a staticmethod's "self" is its argument
import numpy
class A:
    @staticmethod
    def m(x):
        return x
A.m(numpy)._core
