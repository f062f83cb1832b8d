# numpy and pandas: arrays, linear algebra, group-by, CSV to the workspace.
import numpy as np
import pandas as pd


def main():
    df = pd.DataFrame({"k": ["a", "b", "a", "c"], "v": np.arange(4.0)})
    g = df.groupby("k")["v"].sum().to_dict()
    df.to_csv("artifacts/data.csv", index=False)
    back = pd.read_csv("artifacts/data.csv")
    inv = float(np.linalg.inv(np.eye(64) * 4.0).trace())
    return {"groups": g, "rows": int(back.shape[0]), "trace": inv,
            "when": str(pd.Timestamp("2024-03-01", tz="Europe/Paris").tz)}
