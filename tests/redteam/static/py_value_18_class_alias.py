# family: capability-by-value — an alias of the job's class
import matplotlib
class A:
    def go(self):
        return self._get_executable_info("gs")
B = A
B.go(matplotlib)
