import json
import pandas as pd

raw = json.loads('''[{"id": 1, "user": {"name": "a", "geo": {"cc": "FR"}}, "tags": ["x", "y"]},
                    {"id": 2, "user": {"name": "b", "geo": {"cc": "DE"}}, "tags": []}]''')
flat = pd.json_normalize(raw, sep="_")
flat["n_tags"] = flat["tags"].apply(len)
print(flat.drop(columns=["tags"]).to_dict(orient="records"))
exploded = flat.explode("tags").dropna(subset=["tags"])
print(exploded[["id", "tags"]].values.tolist())
