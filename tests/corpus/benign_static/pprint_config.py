import copy
import pprint

DEFAULTS = {"retries": 3, "timeout": 10, "tags": ["a"], "nested": {"x": 1}}


def merge(base, override):
    out = copy.deepcopy(base)
    for k, v in override.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge(out[k], v)
        else:
            out[k] = v
    return out


cfg = merge(DEFAULTS, {"timeout": 30, "nested": {"y": 2}})
pprint.pprint(cfg, width=40)
