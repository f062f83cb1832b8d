import itertools
import operator
from heapq import nlargest

records = [
    {"user": "ann", "day": "mon", "steps": 5000},
    {"user": "bob", "day": "mon", "steps": 7000},
    {"user": "ann", "day": "tue", "steps": 8000},
    {"user": "bob", "day": "tue", "steps": 3000},
]
records.sort(key=operator.itemgetter("user"))
totals = {u: sum(r["steps"] for r in rs) for u, rs in itertools.groupby(records, key=operator.itemgetter("user"))}
print(totals, nlargest(1, totals.items(), key=operator.itemgetter(1)))
pairs = list(itertools.combinations(sorted(totals), 2))
print(pairs, list(itertools.accumulate([1, 2, 3, 4])))
