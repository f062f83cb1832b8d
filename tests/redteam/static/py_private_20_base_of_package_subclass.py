# family: private-api — the job's class A looks plain, but B (also the
# job's) mixes it with a package class: A's methods see B instances as self
import matplotlib.colors
class A:
    def go(self):
        return self._private_helper()
class B(matplotlib.colors.Normalize, A):
    pass
B().go()
