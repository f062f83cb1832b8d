# family: private-api (unpickler, re-export path) — read_array with positional allow_pickle
import numpy as np
np.lib.npyio.format.read_array(open("x.npy", "rb"), True)
