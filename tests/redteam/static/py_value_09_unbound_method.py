# family: capability-by-value — a package passed as self to the job's own method
import matplotlib

class Runner:
    def go(self):
        return self._get_executable_info("gs")

Runner.go(matplotlib)
