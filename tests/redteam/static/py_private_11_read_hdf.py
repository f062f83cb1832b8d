# family: private-api (unpickler) — HDF object columns are pickles
import pandas as pd
store = pd.HDFStore("x.h5")
print(pd.read_hdf("x.h5", "k"))
