# family: private-api — `or` does not narrow
import matplotlib
class A:
    pass
def f(o):
    return isinstance(o, A) or o._get_executable_info("gs")
f(matplotlib)
