# family: private-api (dangerous public) — numpy.ctypeslib loads a shared library
from numpy import ctypeslib
ctypeslib.load_library("libc", "/lib")
