# family: names-as-data — update_wrapper's assigned names from a variable
import functools
import numpy as np
names = tuple(["test"])

def w():
    pass

functools.update_wrapper(w, np, assigned=names, updated=())
