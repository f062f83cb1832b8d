# family: private-api — isinstance is the job's own function here
import matplotlib
class A:
    pass
def isinstance(a, b):
    return True
def f(o):
    return isinstance(o, A) and o._get_executable_info("gs")
f(matplotlib)
