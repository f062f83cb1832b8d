# family: capability-by-value — a module through next(iter(...))
import pandas as pd
next(iter([pd.io.common])).subprocess.run(["id"])
