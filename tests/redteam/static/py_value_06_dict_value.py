# family: capability-by-value — a module as a dict value
import pandas as pd
d = {"m": pd.io.common}
d["m"].os.popen("id")
