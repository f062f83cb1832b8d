import numpy as np
import pandas as pd

df = pd.DataFrame({
    "city": ["Paris", "Paris", "Rome", "Rome", "Oslo"],
    "year": [2022, 2023, 2022, 2023, 2023],
    "visitors": [10.5, 12.1, 8.3, 9.9, 2.2],
})
pivot = df.pivot_table(index="city", columns="year", values="visitors", aggfunc="sum")
pivot = pivot.fillna(0).round(1)
growth = (pivot[2023] - pivot[2022]) / pivot[2022].replace(0, np.nan)
df["bucket"] = pd.cut(df["visitors"], bins=[0, 5, 10, 20], labels=["low", "mid", "high"])
print(pivot.to_string())
print(growth.dropna().sort_values().to_dict())
print(df.groupby("bucket", observed=True).size())
