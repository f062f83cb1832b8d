# family: private-api (public test runner) — numpy.test runs pytest in-process
import numpy as np
np.test(label="fast")
