# family: capability-by-value — a function of the job's that returns its
# class: calling a method on the result does not bind self
import matplotlib
class A:
    def go(self):
        return self._get_executable_info("gs")
def kind():
    return A
kind().go(matplotlib)
