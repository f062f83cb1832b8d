# native_code: ctypes as an attribute of an allowed package's submodule, then
# a symbol looked up in the process.
import numpy as np


def main():
    c = getattr(np.ctypeslib, "ctypes")
    return c.CDLL(None).getpid()
