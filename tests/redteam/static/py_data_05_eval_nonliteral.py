# family: names-as-data — pandas eval of an expression built from data at run time
import pandas as pd
df = pd.DataFrame({"a": [1]})
expr = " ".join(str(t) for t in ("a", "+", 1))
print(df.eval(expr))
