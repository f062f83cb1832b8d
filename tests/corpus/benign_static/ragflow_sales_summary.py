import pandas as pd


def main(csv_text: str) -> dict:
    from io import StringIO
    df = pd.read_csv(StringIO(csv_text))
    df["date"] = pd.to_datetime(df["date"], errors="coerce")
    df = df.dropna(subset=["date"])
    monthly = df.groupby(df["date"].dt.to_period("M"))["amount"].sum()
    top = df.groupby("region")["amount"].sum().sort_values(ascending=False).head(3)
    return {
        "monthly": {str(k): float(v) for k, v in monthly.items()},
        "top_regions": top.to_dict(),
        "rows": int(len(df)),
    }
