# family: capability-by-value — in a classmethod, cls.go is the unbound
# function: the caller picks its self
import matplotlib
class A:
    def go(self):
        return self._get_executable_info("gs")
    @classmethod
    def run(cls):
        return cls.go(matplotlib)
A.run()
