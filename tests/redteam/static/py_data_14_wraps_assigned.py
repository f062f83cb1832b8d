# family: names-as-data — functools.wraps copying a private name
import functools
import matplotlib

@functools.wraps(matplotlib, assigned=("_get_executable_info",), updated=())
def w():
    pass

w._get_executable_info("gs")
