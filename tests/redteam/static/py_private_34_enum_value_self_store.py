# family: capability-by-value — a field set by a standard-library base (Enum
# sets _value_ to the member's value): a self-store does not make it known
import enum
import numpy
class E(enum.Enum):
    A = numpy
    def f(self):
        self._value_ = self._value_
        return self._value_._core
