import difflib


def main(a: str, b: str) -> dict:
    ratio = difflib.SequenceMatcher(None, a, b).ratio()
    diff = list(difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm=""))
    close = difflib.get_close_matches("appel", ["apple", "ape", "peach"], n=2)
    return {"ratio": round(ratio, 3), "diff": "\n".join(diff), "close": close}


print(main("a\nb\nc", "a\nB\nc"))
