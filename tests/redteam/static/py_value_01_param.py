# family: capability-by-value — a package passed through a parameter
import pandas as pd

def reach(m):
    return m.os

reach(pd.io.common).system("id")
