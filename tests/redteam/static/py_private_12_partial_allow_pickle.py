# family: private-api (unpickler via partial) — allow_pickle bound through functools.partial
import functools
import numpy as np
loader = functools.partial(np.load, allow_pickle=True)
loader("obj.npy")
