# family: capability-by-value — getattr bound by partial
import functools
import pandas as pd
g = functools.partial(getattr, pd.io.common)
g("os").system("id")
