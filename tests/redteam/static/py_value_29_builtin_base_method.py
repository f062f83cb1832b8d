# family: capability-by-value — a method of the job's named like a builtin
# base's (dict.get): on a dict subclass the builtin answers, with a package
import numpy
class Box:
    def get(self, k):
        return Box()
class D(dict):
    pass
d = D()
d["k"] = numpy
d.get("k")._core
