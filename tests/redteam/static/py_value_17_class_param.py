# family: capability-by-value — the class passed to a function that takes the method
import matplotlib
class A:
    def go(self):
        return self._get_executable_info("gs")
def take(C):
    return C.go
take(A)(matplotlib)
