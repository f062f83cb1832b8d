import pandas as pd

df = pd.DataFrame({"price": [10, 20, 30], "qty": [1, 5, 2], "cat": ["a", "b", "a"]})
df = df.eval("total = price * qty")
cheap = df.query("price < 25 and cat == 'a'")
print(cheap[["price", "total"]].to_dict(orient="records"))
print(df.assign(share=lambda d: d["total"] / d["total"].sum()).round(3))
