# family: capability-by-value — a module kept in a container
import numpy as np
mods = [np.ctypeslib]
mods[0].load_library("libc", "/lib")
