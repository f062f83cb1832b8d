# family: private-api — numpy's private core modules
import numpy as np
m = np._core.multiarray
print(m)
