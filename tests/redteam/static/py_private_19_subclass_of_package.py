# family: private-api — a class of the job's that inherits from a package's
# class reads the package's private helpers through self
import matplotlib.colors
class Norm(matplotlib.colors.Normalize):
    def go(self):
        return self._private_helper()
