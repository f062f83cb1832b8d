# family: capability-by-value — a "field" that is a property returns anything
import matplotlib
class Box:
    @property
    def _m(self):
        return matplotlib
    def go(self):
        return self._m._get_executable_info("gs")
Box().go()
