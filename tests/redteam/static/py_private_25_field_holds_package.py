# family: capability-by-value — a field of the job's object that holds a package
import matplotlib
class Box:
    def __init__(self):
        self._m = matplotlib
    def go(self):
        return self._m._get_executable_info("gs")
Box().go()
