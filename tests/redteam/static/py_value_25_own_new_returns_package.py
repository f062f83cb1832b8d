# family: capability-by-value — the job's class whose __new__ returns its
# argument: A(pkg) is the package, not an instance of the job's
import matplotlib
class A:
    def __new__(cls, m):
        return m
A(matplotlib)._get_executable_info("gs")
