# family: capability-by-value — importlib reached as an attribute of an allowed package
import pandas as pd
pd.compat.importlib.import_module("os").system("id")
