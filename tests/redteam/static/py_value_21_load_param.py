# family: capability-by-value — numpy.load passed as a module parameter, pickles on by position
import numpy as np

def read(mod, path):
    return mod.load(path, None, True)

read(np, "obj.npy")
