# family: capability-by-value — getattr on the class, self renamed and captured by a lambda
import matplotlib
class A:
    def go(this):
        f = lambda: this._get_executable_info
        return f()("gs")
getattr(A, "go")(matplotlib)
