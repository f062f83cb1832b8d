# family: names-as-data — update_wrapper copies a private attribute by name
import functools
import matplotlib

def w():
    pass

functools.update_wrapper(w, matplotlib, assigned=("_get_executable_info",), updated=())
w._get_executable_info("gs")
