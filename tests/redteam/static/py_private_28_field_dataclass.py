# family: capability-by-value — a dataclass field is an __init__ parameter
import dataclasses
import matplotlib
@dataclasses.dataclass
class Box:
    _m: object = None
    def go(self):
        return self._m._get_executable_info("gs")
Box(matplotlib).go()
