import json
import math
from collections import Counter, defaultdict
import pandas as pd


class Summary:
    def __init__(self, rows):
        self.rows = list(rows)

    def mean(self, key):
        vals = [r[key] for r in self.rows if key in r]
        return sum(vals) / len(vals) if vals else math.nan


def main(data: str = "[]", top: int = 3) -> dict:
    rows = json.loads(data)
    counts = Counter(r.get("kind", "?") for r in rows)
    by_kind = defaultdict(list)
    for r in rows:
        by_kind[r.get("kind")].append(r)
    df = pd.DataFrame(rows)
    return {"top": counts.most_common(top), "n": len(df), "mean": Summary(rows).mean("v")}
