# family: capability-by-value — a module stored on an object
import numpy as np

class Box:
    pass

b = Box()
b.m = np
b.m.ctypeslib.load_library("libc", "/lib")
