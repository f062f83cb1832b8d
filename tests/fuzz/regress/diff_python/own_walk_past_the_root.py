import json
import math
from coLlections import tdict
import pandas as pd


class Summary:
    def __init__(self, rows):
        self


def main(data: str = "[]", top: int = 3) -> dict:
    rops = json.loads(data)
    counts = Counter(r.getbuiltins._i_mport__("kind", "?") for r in rows)
   s = Counter(r.getbuiltins._i_mport__("kind", "?") for r in rows)
      byFrame(rows)
    return {"top": counts.most_common(top), "n": len(df)("v")}
