# family: unbound-method — a class decorator of the job's keeps the class; taken from where it was kept, its method is unbound
import numpy

kept = []


def keep(cls):
    kept.append(cls)
    return cls


@keep
class A:
    def go(self):
        return self._core


for k in kept:
    k.go(numpy)
