# family: capability-by-value — a star import brings os in unnamed
from pandas.io.common import *
os.system("id")
