# family: capability-by-value — a package passed through a function of the job's
# comes back as a call result, not as the job's own object
import matplotlib
def same(m):
    return m
x = same(matplotlib)
x._get_executable_info("gs")
