# family: private-api (unpickler, re-export path) — read_pickle from its home module
import pandas as pd
pd.io.pickle.read_pickle("data.pkl")
