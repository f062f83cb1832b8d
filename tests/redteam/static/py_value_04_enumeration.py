# family: capability-by-value — enumeration of a module's namespace
import pandas as pd
for name, v in pd.io.common.__dict__.items():
    pass
