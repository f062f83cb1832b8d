"""Write N audit lines shaped as the gateway writes them (gw_jobs.c), for the
audit index benchmark and tests: gen_audit_log.py N PATH [SEED].

Tenants, endpoints, languages, policies, verdicts and outcomes cycle through
small sets; one line in 20 is a rejection with one or two rules, one in 200
names the rare rule `py.forbidden_call.eval`. Times are one line per 10 ms
ending now, so the whole log is inside any retention of a day or more."""
import json
import random
import sys
import time

TENANTS = ["ragflow", "dify", "agents", "batch"]
ENDPOINTS = ["run", "v1_run", "v1_analyze", "mcp", "v1_sessions"]
POLICIES = ["default", "strict", "permissive"]
RULES = ["py.import.forbidden", "py.forbidden_name", "js.require.forbidden", "py.attribute.private"]
OUTCOMES = ["success", "success", "success", "program_error", "resource_limit_exceeded"]


def line(i, n, rnd, now_ms):
    """Line i of n (rnd: a random.Random, or None for one seeded with i)."""
    rnd = rnd or random.Random(i)
    ms = now_ms - (n - i) * 10
    t = time.gmtime(ms // 1000)
    when = time.strftime("%Y-%m-%dT%H:%M:%S", t) + ".%03dZ" % (ms % 1000)
    lang = "python" if i % 3 else "nodejs"
    rules, verdict, outcome, status = [], "accept", OUTCOMES[i % len(OUTCOMES)], 200
    if i % 200 == 7:
        rules, verdict, outcome = ["py.forbidden_call.eval"], "reject", "rejected"
    elif i % 20 == 3:
        rules = rnd.sample(RULES, 1 + i % 2)
        verdict, outcome = "reject", "rejected"
    return json.dumps({
        "time": when, "request_id": "%016x" % (0x5eed000000000000 + i),
        "endpoint": ENDPOINTS[i % len(ENDPOINTS)], "tenant": TENANTS[i % len(TENANTS)],
        "peer": "127.0.0.1", "language": lang, "code_bytes": 40 + i % 400,
        "code_sha256": "%064x" % i, "policy": POLICIES[i % len(POLICIES)],
        "policy_sha256": "ab" * 32, "verdict": verdict, "rules": rules,
        "analysis_cached": False, "executor": "http://127.0.0.1:9401", "status": status,
        "outcome": outcome, "analysis_ms": 0.2, "exec_ms": 41.5, "total_ms": 42.0,
    }, separators=(",", ":"))


def main():
    n, path = int(sys.argv[1]), sys.argv[2]
    rnd = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    now_ms = int(time.time() * 1000)
    with open(path, "w") as f:
        for i in range(n):
            f.write(line(i, n, rnd, now_ms) + "\n")


if __name__ == "__main__":
    main()
