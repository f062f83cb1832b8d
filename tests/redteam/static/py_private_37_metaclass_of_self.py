# family: private-api — the metaclass reached as type(type(self))
import matplotlib.colors
class A:
    def go(self):
        return self._private_helper()
    def make(self):
        t = type(self)
        return type(t)("B", (t, matplotlib.colors.Normalize), {})
A().make()().go()
