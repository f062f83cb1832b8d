# family: private-api (unpickler) — pandas' pickle compatibility loader
import pandas as pd
pd.compat.pickle_compat.loads(b"...")
