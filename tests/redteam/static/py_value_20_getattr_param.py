# family: capability-by-value — getattr with a folded capability name on a parameter
import numpy as np
def f(m):
    return getattr(m, "o" + "s")
f(np.lib).system("id")
