# family: names-as-data — backend= on a plot call imports by name
import pandas as pd
pd.Series([1, 2]).plot(backend="this")
