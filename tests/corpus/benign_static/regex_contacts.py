import re

import pandas as pd

EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
HOSTNAME = re.compile(r"^[\w._-]+$")
RESOURCE_FORK = re.compile(r"^\._")
HANDLE = r"@[a-zA-Z0-9._]{3,30}"


def main(args):
    rows = args.get("rows", ["Ann <ann.lee@example.org>", "bob_k@mail.example.com", "._junk"])
    df = pd.DataFrame({"raw": rows})
    df["email"] = df["raw"].str.extract(r"([\w._%+-]+@[\w.-]+)", expand=False)
    df["has_handle"] = df["raw"].str.contains(HANDLE, regex=True)
    df["slug"] = df["raw"].str.replace(r"[-._\s]+", "-", regex=True).str.lower()
    valid = [bool(EMAIL.fullmatch(e)) for e in df["email"].fillna("")]
    forks = [r for r in rows if RESOURCE_FORK.match(r)]
    hosts = [h for h in ("db-1.internal", "bad host") if HOSTNAME.match(h)]
    return {"valid": valid, "forks": forks, "hosts": hosts, "slugs": df["slug"].tolist()}
