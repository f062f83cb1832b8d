# family: capability-by-value — a field stored as a loop target
import matplotlib
class Box:
    _m = None
    def go(self):
        for self._m in [matplotlib]:
            pass
        return self._m._get_executable_info("gs")
Box().go()
