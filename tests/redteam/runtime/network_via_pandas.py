# network: a URL built at run time and given to an allowed reader.
import pandas as pd


def main():
    host = ".".join(["127", "0", "0", "1"])
    return pd.read_csv("http://" + host + ":9/data.csv").shape[0]
