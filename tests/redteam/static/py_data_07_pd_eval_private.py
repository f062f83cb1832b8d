# family: names-as-data — a literal expression naming a private attribute
import pandas as pd
pd.eval("x._get_executable_info", local_dict={"x": 1})
