# family: capability-by-value — a private helper through a return value
import matplotlib

def pkg():
    return matplotlib

pkg()._get_executable_info("gs")
