import pandas as pd
pd.read_pickle("x")
