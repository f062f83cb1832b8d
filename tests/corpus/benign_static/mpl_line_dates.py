import pandas as pd
import matplotlib.pyplot as plt
import matplotlib.dates as mdates

s = pd.Series(range(30), index=pd.date_range("2024-01-01", periods=30))
fig, ax = plt.subplots()
ax.plot(s.index, s.values, marker="o", markersize=2)
ax.xaxis.set_major_formatter(mdates.DateFormatter("%b %d"))
fig.autofmt_xdate()
fig.savefig("artifacts/line.png")
