# family: capability-by-value — a field the job never stores: enum.Enum sets
# _value_ to the member's value, here a package
import enum
import numpy
class E(enum.Enum):
    A = numpy
    def f(self):
        return self._value_._core
