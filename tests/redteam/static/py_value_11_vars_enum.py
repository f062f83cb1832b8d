# family: capability-by-value — a namespace walk hands the loop variable a module
import pandas as pd
for v in list(pd.io.common.__builtins__.values()):
    pass
