import re
import pandas as pd

df = pd.DataFrame({"text": ["Great product!!", "bad, very bad", "ok I guess", None]})
df["text"] = df["text"].fillna("")
df["n_words"] = df["text"].str.split().str.len()
df["exclaims"] = df["text"].str.count("!")
df["has_bad"] = df["text"].str.contains(r"\bbad\b", flags=re.IGNORECASE, regex=True)
df["first"] = df["text"].str.extract(r"^(\w+)", expand=False)
print(df.describe(include="all").T[["count"]])
print(df.to_dict(orient="list"))
