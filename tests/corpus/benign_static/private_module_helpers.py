import json

_DEFAULT_KEYS = ("id", "name")
_cache = {}


def _pick(d, keys=_DEFAULT_KEYS):
    return {k: d.get(k) for k in keys}


def main(arg1: str) -> dict:
    if arg1 in _cache:
        return _cache[arg1]
    rows = [_pick(r) for r in json.loads(arg1)]
    _cache[arg1] = {"result": rows}
    return _cache[arg1]


print(main('[{"id": 1, "name": "a", "x": 2}]'))
