import numpy as np
import pandas as pd

idx = pd.date_range("2024-01-01", periods=60, freq="D")
s = pd.Series(np.sin(np.linspace(0, 6, 60)) * 10 + 50, index=idx)
weekly = s.resample("W").mean()
roll = s.rolling(window=7, min_periods=1).mean()
z = (s - s.mean()) / s.std()
print(weekly.round(2).tail(3).to_dict())
print(float(roll.iloc[-1]), int((z.abs() > 1.5).sum()))
