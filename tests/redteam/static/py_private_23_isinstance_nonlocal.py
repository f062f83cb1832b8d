# family: private-api — a nested function rebinds the checked name
import matplotlib
class A:
    pass
def f(o):
    def swap():
        nonlocal o
        o = matplotlib
    if isinstance(o, A):
        swap()
        return o._get_executable_info("gs")
