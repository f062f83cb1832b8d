# family: private-api (unpickler) — imported under another name
from pandas.io.pickle import read_pickle as rp
rp("data.pkl")
