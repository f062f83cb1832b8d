# family: capability-by-value — a decorator decides what "self" is
import matplotlib

def with_pkg(fn):
    return lambda: fn(matplotlib)

class A:
    @with_pkg
    def run(self):
        return self._get_executable_info("gs")

A.run()
