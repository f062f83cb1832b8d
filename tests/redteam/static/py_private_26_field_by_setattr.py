# family: capability-by-value — a field stored by setattr is not seen
import matplotlib
class Box:
    _m = None
    def go(self):
        return self._m._get_executable_info("gs")
b = Box()
setattr(b, "_m", matplotlib)
b.go()
