# family: private-api — a class made at run time from the job's class and a
# package's: the job's methods see its instances as self
import matplotlib.colors
class A:
    def go(self):
        return self._private_helper()
B = type("B", (A, matplotlib.colors.Normalize), {})
B().go()
