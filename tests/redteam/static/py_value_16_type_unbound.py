# family: capability-by-value — type(instance) takes the method unbound
import matplotlib
class A:
    def go(self):
        return self._get_executable_info("gs")
type(A()).go(matplotlib)
