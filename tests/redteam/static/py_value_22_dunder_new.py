# family: capability-by-value — __new__ is called with the class explicitly: a package as cls
import matplotlib

class A:
    def __new__(cls):
        return cls._get_executable_info("gs")

A.__new__(matplotlib)
