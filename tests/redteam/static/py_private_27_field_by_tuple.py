# family: capability-by-value — a field stored through tuple unpacking
import matplotlib
class Box:
    _m = None
    def go(self):
        return self._m._get_executable_info("gs")
b = Box()
b._m, n = matplotlib, 1
b.go()
