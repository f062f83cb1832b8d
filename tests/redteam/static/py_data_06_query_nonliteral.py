# family: names-as-data — query string from the job's input
import pandas as pd

def main(q):
    return pd.DataFrame({"a": [1, 2]}).query(q)
