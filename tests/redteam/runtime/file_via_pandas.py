# file: a path outside the sandbox, built at run time, read by an allowed API.
import pandas as pd


def main():
    path = "/".join(["", "etc", "host" + "name"])
    return pd.read_csv(path, header=None).iloc[0, 0]
