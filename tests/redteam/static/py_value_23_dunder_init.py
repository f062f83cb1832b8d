# family: capability-by-value — __init__ taken from the class with a package as self
import matplotlib

class A:
    def __init__(self):
        self.info = self._get_executable_info("gs")

A.__init__(matplotlib)
