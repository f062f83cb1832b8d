# family: private-api — isinstance() against a class of the job's that
# inherits from a package class proves nothing about private names
import matplotlib.colors
class N(matplotlib.colors.Normalize):
    pass
def f(o):
    return isinstance(o, N) and o._private_helper()
