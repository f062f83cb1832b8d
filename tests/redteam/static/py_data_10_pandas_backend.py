# family: names-as-data — pandas imports plotting backends by name
import pandas as pd
pd.set_option("plotting.backend", "antigravity")
pd.DataFrame({"a": [1]}).plot()
