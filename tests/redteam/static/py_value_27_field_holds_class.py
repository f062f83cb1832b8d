# family: capability-by-value — a field that holds the job's class: a
# method taken on it is unbound, so the caller picks its self
import matplotlib
class A:
    _kind = None
    def go(self):
        return self._get_executable_info("gs")
A._kind = A
A._kind.go(matplotlib)
