import json
from typing import Any, Dict


def flatten(obj: Any, prefix: str = "", out: Dict[str, Any] = None) -> Dict[str, Any]:
    out = {} if out is None else out
    if isinstance(obj, dict):
        for k, v in obj.items():
            flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            flatten(v, f"{prefix}[{i}]", out)
    else:
        out[prefix] = obj
    return out


def main(arg1: str) -> dict:
    flat = flatten(json.loads(arg1))
    return {"result": json.dumps(flat, ensure_ascii=False, sort_keys=True)}


print(main('{"a": {"b": [1, {"c": 2}]}, "d": null}'))
