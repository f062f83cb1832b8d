# family: private-api — an isinstance() check proves nothing once the name
# is bound again
import matplotlib
class A:
    _x = 1
def f(o):
    if isinstance(o, A):
        o = matplotlib
        return o._get_executable_info("gs")
