from collections import namedtuple
import pandas as pd

Point = namedtuple("Point", ["x", "y"])
pts = [Point(1, 2), Point._make([3, 4])]
moved = [p._replace(x=p.x + 1) for p in pts]
print(Point._fields, [p._asdict() for p in moved])

df = pd.DataFrame({"a": [1, 2], "b": ["u", "v"]})
for row in df.itertuples(index=False):
    print(row._asdict())
