import pandas as pd

orders = pd.DataFrame({"oid": [1, 2, 3, 4], "cid": [10, 11, 10, 12], "amount": [5.0, 7.5, None, 3.0]})
customers = pd.DataFrame({"cid": [10, 11, 12], "name": [" Ann ", "bob", "CARL"], "tier": ["g", "s", None]})
customers["name"] = customers["name"].str.strip().str.title()
customers["tier"] = customers["tier"].fillna("basic")
merged = orders.merge(customers, on="cid", how="left", validate="many_to_one")
merged["amount"] = merged["amount"].fillna(merged["amount"].median())
summary = merged.groupby(["name", "tier"], as_index=False).agg(total=("amount", "sum"), n=("oid", "count"))
print(summary.sort_values("total", ascending=False).to_json(orient="records"))
merged.to_csv("artifacts/merged.csv", index=False)
