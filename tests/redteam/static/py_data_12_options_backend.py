# family: names-as-data — the option object path to the backend
import pandas as pd
pd.options.plotting.backend = "antigravity"
