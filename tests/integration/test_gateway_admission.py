"""One admission for every front door: the same forbidden code, the same
bad body and the same over-rate caller sent through RAGFlow's /run, the
native /v1/run and /v1/analyze, a session cell, the MCP tools and Dify's
sandbox API get the same decision, the same audit fields and the same metric
(the real sandgate with fake executors)."""
import base64
import re
import time
import unittest

import gateway_fakes
import sgtest
from gateway_fakes import FakeExecutor, Gateway

TOKEN = "adm-tenant-token-0123456789"
SLOW = "adm-slow-token-0123456789"
TOKENS = {"tenants": {"a": {"tokens": [TOKEN]},
                      "r": {"tokens": [SLOW], "rate_limit": {"per_second": 1, "burst": 1}}}}
AUTH = {"Authorization": "Bearer " + TOKEN}
FORBIDDEN = "import os\ndef main():\n    return 1\n"
NO_SESSION = "py-" + "0" * 16 + "-" + "0" * 32
MAX_CODE = 1024
# the fields every front door's audit line has for the same input
SAME = ("tenant", "language", "code_bytes", "code_sha256", "policy", "policy_sha256",
        "verdict", "rules", "status")


def b64(s):
    return base64.b64encode(s.encode()).decode()


class Admission(gateway_fakes.GatewayWithFakes):
    def setUp(self):
        self.py, self.js = FakeExecutor("python"), FakeExecutor("nodejs")
        self.dport = sgtest.free_port()
        self.gw = Gateway({"executors": {"python": [self.py.url], "nodejs": [self.js.url]},
                           "max_code_bytes": MAX_CODE, "dify_port": self.dport}, tokens=TOKENS)
        self.mcp_sids = {}

    # --- the front doors ----------------------------------------------------
    def mcp(self, auth, tool, arguments):
        """One MCP tools/call: (HTTP-like status from the tool text, request id)."""
        key = auth["Authorization"]
        h = {**auth, "Accept": "application/json, text/event-stream"}
        if key not in self.mcp_sids:
            st, hdrs, _ = self.gw.call("POST", "/mcp", {
                "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"}}}, h)
            self.assertEqual(st, 200)
            self.mcp_sids[key] = hdrs["mcp-session-id"]
            self.gw.call("POST", "/mcp", {"jsonrpc": "2.0",
                                          "method": "notifications/initialized"},
                         {**h, "Mcp-Session-Id": self.mcp_sids[key]})
        st, _, body = self.gw.call("POST", "/mcp", {
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}},
            {**h, "Mcp-Session-Id": self.mcp_sids[key]})
        self.assertEqual(st, 200, body)
        return body["result"]

    def session(self, auth=AUTH):
        st, _, b = self.gw.call("POST", "/v1/sessions", {"language": "python"}, auth)
        self.assertEqual(st, 201, b)
        return b["session_id"]

    def doors(self, code, auth=AUTH, bad_b64=False, sid=None):
        """(door, send) pairs; send() -> (status, error code or None, request id)."""
        enc = "!!!" if bad_b64 else b64(code)

        def http(path, body):
            def send():
                st, hdrs, b = self.gw.call("POST", path, body, auth)
                err = None
                if isinstance(b, dict) and "error" in b:
                    err = b["error"]["code"]
                elif isinstance(b, dict) and st >= 400:  # RAGFlow's shape: the code in detail
                    err = b.get("detail")
                return st, err, hdrs["x-request-id"]
            return send

        def tool(name, args):
            def send():
                before = {a["request_id"] for a in self.gw.audit_lines()}
                res = self.mcp(auth, name, args)
                m = re.search(r"([a-z_]+) \(HTTP (\d+)\)", "\n".join(
                    c.get("text", "") for c in res["content"]))

                def mine():
                    return [a for a in self.gw.audit_lines()
                            if a["request_id"] not in before and a.get("tool") == name]
                self.gw.wait_for(mine, what="the tool's audit line")
                a = mine()[-1]
                return (int(m.group(2)) if m else a["status"]), (m.group(1) if m else None), \
                    a["request_id"]
            return send

        def dify():
            key = auth["Authorization"].split(" ", 1)[1]
            st, hdrs, b = sgtest.http("POST", f"http://127.0.0.1:{self.dport}/v1/sandbox/run",
                                      {"language": "python3", "code": code, "preload": "",
                                       "enable_network": True}, {"X-Api-Key": key})
            # Dify's shape: a refusal is {"code": -400, "message": "<code>: ..."},
            # over the rate {"code": -429}
            err = {-429: "rate_limited", -400: b["message"].split(":", 1)[0]}.get(b["code"])
            return st, err, hdrs["x-request-id"]

        out = [("run", http("/run", {"language": "python", "code_b64": enc})),
               ("v1_run", http("/v1/run", {"language": "python", "code_b64": enc})),
               ("v1_analyze", http("/v1/analyze", {"language": "python", "code_b64": enc})),
               ("cell", http(f"/v1/sessions/{sid or NO_SESSION}/exec", {"code_b64": enc}))]
        if not bad_b64:
            out += [("mcp_run_code", tool("run_code", {"language": "python", "code": code})),
                    ("mcp_check_code", tool("check_code", {"language": "python", "code": code}))]
            if sid:
                out.append(("mcp_session_exec", tool("session_exec",
                                                     {"session_id": sid, "code": code})))
            out.append(("dify", dify))
        return out

    def audit(self, rid):
        return self.gw.audit_line(rid)

    def metric(self, name, **labels):
        _, _, text = self.gw.call("GET", "/metrics")
        sel = ",".join(f'{k}="{v}"' for k, v in labels.items())
        m = re.search(re.escape(f"{name}{{{sel}}}") + r" (\d+)", text)
        return int(m.group(1)) if m else 0

    # --- the tests ----------------------------------------------------------
    def test_forbidden_code_same_decision_audit_and_metric_everywhere(self):
        sid = self.session()
        calls = self.py.calls
        lines = {}
        for door, send in self.doors(FORBIDDEN, sid=sid):
            before = self.metric("sandgate_violations_total", rule="import.not-allowed")
            status, err, rid = send()
            self.assertEqual((status, err), (200, None), door)
            a = self.audit(rid)
            self.assertEqual(a["outcome"], "rejected", (door, a))
            lines[door] = {k: a.get(k) for k in SAME}
            self.assertEqual(self.metric("sandgate_violations_total", rule="import.not-allowed"),
                             before + 1, door)
        first = lines["run"]
        self.assertEqual(first["verdict"], "reject")
        self.assertEqual(first["rules"], ["import.not-allowed"])
        self.assertEqual(first["code_bytes"], len(FORBIDDEN))
        self.assertIsNotNone(first["policy_sha256"])
        for door, fields in lines.items():
            self.assertEqual(fields, first, door)
        self.assertEqual(self.py.calls, calls, "a rejected job reached an executor")

    def test_code_over_the_cap_is_413_code_too_large_everywhere(self):
        code = "# " + "x" * (MAX_CODE + 10) + "\n"
        for door, send in self.doors(code, sid=self.session()):
            status, err, rid = send()
            http = 200 if door == "dify" else 413  # Dify's shape: 200 {"code": -400}
            self.assertEqual((status, err), (http, "code_too_large"), door)
            a = self.audit(rid)
            self.assertEqual((a["status"], a["outcome"]), (http, "code_too_large"), door)

    def test_bad_base64_is_400_bad_base64_everywhere(self):
        for door, send in self.doors("", bad_b64=True, sid=self.session()):
            status, err, rid = send()
            self.assertEqual((status, err), (400, "bad_base64"), door)
            self.assertEqual(self.audit(rid)["outcome"], "bad_base64", door)

    def test_over_rate_is_429_with_retry_after_everywhere(self):
        slow = {"Authorization": "Bearer " + SLOW}
        for door, send in self.doors("def main():\n    return 1\n", auth=slow):
            time.sleep(1.1)  # a full bucket for each door
            before = self.metric("sandgate_requests_total",
                                 endpoint="mcp" if door.startswith("mcp") else
                                 "v1_sessions" if door == "cell" else door, status="429")
            results = [send() for _ in range(3)]
            status, err, rid = results[-1]
            self.assertEqual((status, err), (429, "rate_limited"), (door, results))
            a = self.audit(rid)
            self.assertEqual((a["status"], a["outcome"], a["tenant"]),
                             (429, "rate_limited", "r"), door)
            if not door.startswith("mcp"):  # MCP answers 200 with a tool error
                after = self.metric("sandgate_requests_total",
                                    endpoint="v1_sessions" if door == "cell" else door,
                                    status="429")
                self.assertGreaterEqual(after, before + 1, door)

    def test_retry_after_header_on_every_http_door(self):
        slow = {"Authorization": "Bearer " + SLOW}
        for path, body in (("/run", {"code_b64": b64("x = 1")}),
                           ("/v1/run", {"language": "python", "code": "x = 1"}),
                           ("/v1/analyze", {"language": "python", "code": "x = 1"}),
                           (f"/v1/sessions/{NO_SESSION}/exec", {"code": "x = 1"}),
                           ("/v1/sessions", {"language": "python"})):
            time.sleep(1.1)
            answers = [self.gw.call("POST", path, body, slow) for _ in range(3)]
            st, hdrs, b = answers[-1]
            self.assertEqual(st, 429, (path, b))
            self.assertGreaterEqual(int(hdrs["retry-after"]), 1, path)


if __name__ == "__main__":
    unittest.main()
