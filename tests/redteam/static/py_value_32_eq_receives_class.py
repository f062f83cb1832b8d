# family: unbound-method — comparing an instance with its class hands the class to the job's __eq__, where its method is unbound
import numpy


class A:
    def go(self):
        return self._core

    def __eq__(self, other):
        f = other.go
        return f(numpy)


A() == A
