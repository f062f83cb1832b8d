# family: capability-by-value — a class attribute that holds a package
import matplotlib
class Reg:
    _mod = matplotlib
    @classmethod
    def go(cls):
        return cls._mod._get_executable_info("gs")
Reg.go()
