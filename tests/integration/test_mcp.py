"""POST /mcp, the Model Context Protocol endpoint, over HTTP to the real
sandgate with fake executors: version negotiation in initialize, sessions
(Mcp-Session-Id issued, required, 404 once unknown, DELETE), tools/list with
descriptions generated from the live policy, each tool through the /v1
pipeline (audit endpoint "mcp" + tool name), results as MCP content, tool
errors naming rule/line/column, JSON-RPC errors for malformed input, auth and
size caps; and an independent MCP client (the reference TypeScript SDK from
the npm registry, pinned with its integrity in tests/interop/package-lock.json)
driving the endpoint."""
import base64
import json
import os
import re
import shutil
import subprocess
import threading
import time
import unittest

import sgtest
from gateway_fakes import FakeExecutor, Gateway, policy_with

TOKEN = "mcp-tenant-token-0123456789"
OTHER = "mcp-other-token-0123456789"
SLOW = "mcp-rate-limited-token-0123456789"
TOKENS = {"tenants": {
    "a": {"tokens": [TOKEN], "policies": ["default", "strict"]},
    "b": {"tokens": [OTHER], "default_policy": "odd"},
    "r": {"tokens": [SLOW], "rate_limit": {"per_second": 1, "burst": 1}},
}}
AUTH = {"Authorization": "Bearer " + TOKEN}
ACCEPT = {"Accept": "application/json, text/event-stream"}
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()


def init_body(version="2025-06-18", rid=1):
    return {"jsonrpc": "2.0", "id": rid, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {},
                       "clientInfo": {"name": "test", "version": "0"}}}


def text_of(result):
    return "\n".join(c["text"] for c in result["content"] if c["type"] == "text")


class McpCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.py = FakeExecutor("python")
        cls.js = FakeExecutor("nodejs")
        odd = policy_with("odd")
        odd["python"]["imports"]["modules"].append("zzmcpmodule")
        cls.gw = Gateway({"executors": {"python": [cls.py.url], "nodejs": [cls.js.url]},
                          "max_body_bytes": 64 * 1024, "max_code_bytes": 8 * 1024},
                         tokens=TOKENS, policies={"odd": odd})

    @classmethod
    def tearDownClass(cls):
        try:
            assert cls.gw.stop() == 0, "sandgate exited non-zero (sanitizer report?)"
        finally:
            cls.py.stop()
            cls.js.stop()

    def setUp(self):
        self.py.answer = FakeExecutor.answer.__get__(self.py)

    def post(self, body, session=None, headers=None, auth=AUTH):
        h = dict(ACCEPT)
        h.update(auth or {})
        if session:
            h["Mcp-Session-Id"] = session
        h.update(headers or {})
        return self.gw.call("POST", "/mcp", body, h)

    def session(self, version="2025-06-18", auth=AUTH):
        st, hdrs, body = self.post(init_body(version), auth=auth)
        self.assertEqual(st, 200, body)
        sid = hdrs["mcp-session-id"]
        st, _, _ = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid,
                             auth=auth)
        self.assertEqual(st, 202)
        return sid

    def call(self, sid, method, params=None, rid=7, auth=AUTH):
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        st, _, body = self.post(msg, sid, auth=auth)
        self.assertEqual(st, 200, body)
        self.assertEqual(body["id"], rid)
        return body

    def job_audit(self, result):
        job = re.search(r"\[job ([0-9a-f]+)\]", text_of(result)).group(1)
        return self.gw.audit_line(job)

    def tool(self, sid, name, arguments):
        body = self.call(sid, "tools/call", {"name": name, "arguments": arguments})
        self.assertIn("result", body, body)
        return body["result"]

    # --- lifecycle ---------------------------------------------------------
    def test_initialize_negotiates_the_version_and_issues_a_session(self):
        for asked, got in (("2025-06-18", "2025-06-18"), ("2025-03-26", "2025-03-26"),
                           ("1999-01-01", "2025-06-18")):
            st, hdrs, body = self.post(init_body(asked))
            self.assertEqual(st, 200, body)
            self.assertEqual(body["result"]["protocolVersion"], got)
            self.assertEqual(body["result"]["serverInfo"]["name"], "sandgate")
            self.assertIn("tools", body["result"]["capabilities"])
            self.assertRegex(hdrs["mcp-session-id"], r"^[0-9a-f]{32}$")
        ids = {self.post(init_body())[1]["mcp-session-id"] for _ in range(5)}
        self.assertEqual(len(ids), 5)

    def test_initialize_needs_its_params(self):
        st, _, body = self.post({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                 "params": {"protocolVersion": "2025-06-18"}})
        self.assertEqual(st, 200)
        self.assertEqual(body["error"]["code"], -32602)

    def test_session_is_required_validated_and_ends_with_delete(self):
        st, _, body = self.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        self.assertEqual(st, 400)
        self.assertIn("Mcp-Session-Id", body["error"]["message"])
        st, _, body = self.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, "0" * 32)
        self.assertEqual(st, 404)
        sid = self.session()
        self.assertEqual(self.call(sid, "ping")["result"], {})
        h = dict(AUTH, **{"Mcp-Session-Id": sid})
        st, _, _ = self.gw.call("DELETE", "/mcp", None, h)
        self.assertEqual(st, 204)
        st, _, _ = self.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, sid)
        self.assertEqual(st, 404)
        st, _, _ = self.gw.call("DELETE", "/mcp", None, h)
        self.assertEqual(st, 404)

    def test_a_session_belongs_to_its_tenant(self):
        sid = self.session()
        st, _, _ = self.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, sid,
                             auth={"Authorization": "Bearer " + OTHER})
        self.assertEqual(st, 404)

    def test_get_is_405_and_protocol_version_header_is_checked(self):
        st, hdrs, _ = self.gw.call("GET", "/mcp", None, AUTH)
        self.assertEqual(st, 405)
        self.assertIn("POST", hdrs["allow"])
        sid = self.session()
        st, _, body = self.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, sid,
                                {"MCP-Protocol-Version": "2024-01-01"})
        self.assertEqual(st, 400)
        self.assertIn("2024-01-01", body["error"]["message"])
        st, _, _ = self.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, sid,
                             {"MCP-Protocol-Version": "2025-06-18"})
        self.assertEqual(st, 200)

    def test_accept_and_content_type(self):
        st, _, _ = self.post(init_body(), headers={"Accept": "text/html"})
        self.assertEqual(st, 406)
        st, _, _ = self.post(json.dumps(init_body()), headers={"Content-Type": "text/plain"})
        self.assertEqual(st, 415)

    # --- JSON-RPC errors -----------------------------------------------------
    def test_malformed_json_rpc(self):
        sid = self.session()
        for raw, status, code in (("{not json", 400, -32700), ("42", 400, -32600),
                                  ("[]", 400, -32600), ('{"a":1,"a":2}', 400, -32700)):
            st, _, body = self.post(raw, sid)
            self.assertEqual((st, body["error"]["code"]), (status, code), raw)
            self.assertIsNone(body["id"])
        for msg, code in (({"jsonrpc": "1.0", "id": 3, "method": "ping"}, -32600),
                          ({"jsonrpc": "2.0", "id": 3}, -32600),
                          ({"jsonrpc": "2.0", "id": 3, "method": "ping", "params": [1]}, -32600),
                          ({"jsonrpc": "2.0", "id": 3, "method": "nope/nope"}, -32601)):
            st, _, body = self.post(msg, sid)
            self.assertEqual(st, 200, msg)
            self.assertEqual(body["error"]["code"], code, msg)
            self.assertEqual(body["id"], 3)
        st, _, body = self.post({"jsonrpc": "2.0", "id": None, "method": "ping"}, sid)
        self.assertEqual(body["error"]["code"], -32600)
        # a response to a server request we never sent is accepted and ignored
        st, _, _ = self.post({"jsonrpc": "2.0", "id": 9, "result": {}}, sid)
        self.assertEqual(st, 202)

    def test_batches_only_under_2025_03_26(self):
        batch = [{"jsonrpc": "2.0", "id": 1, "method": "ping"},
                 {"jsonrpc": "2.0", "method": "notifications/initialized"},
                 {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, 5]
        st, _, body = self.post(batch, self.session("2025-06-18"))
        self.assertEqual(st, 400)
        st, _, body = self.post(batch, self.session("2025-03-26"))
        self.assertEqual(st, 200, body)
        self.assertEqual([m.get("id") for m in body], [1, 2, None])
        self.assertEqual(body[2]["error"]["code"], -32600)
        st, _, _ = self.post([init_body()], self.session("2025-03-26"))
        self.assertEqual(st, 400)
        before = self.py.calls
        calls = [{"jsonrpc": "2.0", "id": i, "method": "tools/call",
                  "params": {"name": "run_code", "arguments": {
                      "language": "python", "code": "def main():\n    return 1\n"}}}
                 for i in range(6)]
        st, _, body = self.post(calls, self.session("2025-03-26"))
        self.assertEqual(st, 200, body)
        self.assertEqual([("result" in m) for m in body], [True] * 4 + [False] * 2)
        self.assertEqual(body[5]["error"]["code"], -32600)
        self.assertEqual(self.py.calls, before + 4)

    def test_tool_call_params_are_checked(self):
        sid = self.session()
        before = self.py.calls
        for params in ({"name": "no_such_tool", "arguments": {}},
                       {"arguments": {}},
                       {"name": "run_code", "arguments": {"language": "python"}},
                       {"name": "run_code", "arguments": {"language": "python", "code": 5}},
                       {"name": "run_code", "arguments": {"language": "python", "code": "x",
                                                          "limits": {}}},
                       {"name": "check_code", "arguments": {"language": "python", "code": "x",
                                                            "files": {}}},
                       {"name": "list_runtimes", "arguments": {"policy": 3}}):
            body = self.call(sid, "tools/call", params)
            self.assertEqual(body["error"]["code"], -32602, params)
        self.assertEqual(self.py.calls, before)

    # --- auth and caps --------------------------------------------------------
    def test_auth_is_required_on_the_headers(self):
        st, _, body = self.post(init_body(), auth={})
        self.assertEqual(st, 401)
        st, _, _ = self.post(init_body(), auth={"X-Sandbox-Token": TOKEN})
        self.assertEqual(st, 200)
        self.gw.wait_for(lambda: any(a["endpoint"] == "mcp" and a["status"] == 401
                                     for a in self.gw.audit_lines()), what="a 401 audit line")

    def test_tool_calls_take_the_tenants_rate_limit(self):
        auth = {"Authorization": "Bearer " + SLOW}
        sid = self.session(auth=auth)
        args = {"name": "check_code", "arguments": {"language": "python", "code": "x = 1\n"}}
        results = [self.call(sid, "tools/call", args, auth=auth)["result"] for _ in range(3)]
        self.assertFalse(results[0]["isError"])
        self.assertTrue(results[-1]["isError"])
        self.assertIn("rate_limited (HTTP 429)", text_of(results[-1]))

    def test_oversize_body_is_413(self):
        sid = self.session()
        big = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "run_code",
                          "arguments": {"language": "python", "code": "#" * 70000}}}
        st, hdrs, body = self.post(big, sid)
        self.assertEqual(st, 413)
        # in the JSON-RPC shape an MCP client reads (it was the REST error)
        self.assertEqual(body["jsonrpc"], "2.0", body)
        self.assertIsNone(body["id"])
        self.assertEqual(body["error"]["code"], -32600, body)
        self.assertIn("65536", body["error"]["message"])
        self.assertIn("x-request-id", hdrs)
        # under the body cap but over the code cap: a tool error from the pipeline
        code = "# " + "x" * 9000 + "\ndef main():\n    return 1\n"
        res = self.tool(sid, "run_code", {"language": "python", "code": code})
        self.assertTrue(res["isError"])
        self.assertIn("code_too_large", text_of(res))

    # --- tools ------------------------------------------------------------------
    def test_tools_list_is_generated_from_the_live_policy(self):
        tools = {t["name"]: t for t in self.call(self.session(), "tools/list")["result"]["tools"]}
        self.assertEqual(set(tools), {"run_code", "check_code", "list_runtimes", "session_create",
                                      "session_exec", "session_upload", "session_download",
                                      "session_close"})
        self.assertEqual(tools["session_upload"]["inputSchema"]["required"],
                         ["session_id", "name", "content_b64"])
        self.assertEqual(tools["session_download"]["annotations"], {"readOnlyHint": True})
        self.assertEqual(tools["session_exec"]["inputSchema"]["required"],
                         ["session_id", "code"])
        run = tools["run_code"]
        self.assertEqual(run["inputSchema"]["required"], ["language", "code"])
        self.assertEqual(set(run["inputSchema"]["properties"]),
                         {"language", "code", "arguments", "files", "policy"})
        self.assertEqual(sorted(run["inputSchema"]["properties"]["policy"]["enum"]),
                         ["default", "strict"])
        d = run["description"]
        for needle in ("def main(**arguments)", "module.exports = { main }", "policy 'default'",
                       "pandas", "matplotlib", "Network: off", "artifacts/"):
            self.assertIn(needle, d)
        self.assertNotIn("zzmcpmodule", d)
        tools_b = self.call(self.session(auth={"Authorization": "Bearer " + OTHER}),
                            "tools/list", auth={"Authorization": "Bearer " + OTHER})
        d_b = tools_b["result"]["tools"][0]["description"]
        self.assertIn("zzmcpmodule", d_b)
        self.assertIn("policy 'odd'", d_b)

    def test_run_code_goes_through_the_run_pipeline(self):
        sid = self.session()
        before = self.py.calls
        res = self.tool(sid, "run_code", {"language": "python", "arguments": {"n": 2},
                                          "code": "def main(n):\n    return n\n"})
        self.assertFalse(res["isError"], res)
        t = text_of(res)
        self.assertIn("status: success", t)
        self.assertIn("stdout:\nhello", t)
        self.assertIn('result (JSON):\n{"echo":{"n":2}}', t)
        self.assertEqual(self.py.calls, before + 1)
        job = self.py.jobs[-1]
        self.assertEqual(job["code"], "def main(n):\n    return n\n")
        self.assertEqual(job["arguments"], {"n": 2})
        self.assertIn("runtime", job)
        audit = self.job_audit(res)
        self.assertEqual(audit["endpoint"], "mcp")
        self.assertEqual(audit["tool"], "run_code")
        self.assertEqual(audit["tenant"], "a")
        self.assertEqual(audit["verdict"], "accept")
        self.assertEqual(audit["outcome"], "success")

    def test_run_code_policy_rejection_is_a_tool_error_with_rule_line_column(self):
        sid = self.session()
        before = self.py.calls
        res = self.tool(sid, "run_code", {"language": "python",
                                          "code": "import os\ndef main():\n    return 1\n"})
        self.assertTrue(res["isError"])
        t = text_of(res)
        self.assertIn("rejected by policy 'default'", t)
        self.assertRegex(t, r"line 1, column 8: .*\[rule import\.not-allowed\]")
        self.assertEqual(self.py.calls, before)
        audit = self.job_audit(res)
        self.assertEqual((audit["endpoint"], audit["tool"]), ("mcp", "run_code"))
        self.assertEqual(audit["verdict"], "reject")
        self.assertEqual(audit["rules"], ["import.not-allowed"])

    def test_run_code_policy_selection_follows_the_tenant(self):
        sid = self.session()
        res = self.tool(sid, "run_code", {"language": "python", "code": "x = 1",
                                          "policy": "permissive"})
        self.assertTrue(res["isError"])
        self.assertIn("policy_not_allowed", text_of(res))

    def test_artifacts_become_image_and_resource_content(self):
        def answer(job):
            doc = FakeExecutor.answer(self.py, job)
            doc["artifacts"] = [
                {"name": "chart.png", "mime_type": "image/png", "size": 12, "content_b64": PNG},
                {"name": "data.csv", "mime_type": "text/csv", "size": 4,
                 "content_b64": base64.b64encode(b"a,b\n").decode()}]
            return doc
        self.py.answer = answer
        res = self.tool(self.session(), "run_code",
                        {"language": "python", "code": "def main():\n    return 1\n"})
        images = [c for c in res["content"] if c["type"] == "image"]
        self.assertEqual(images, [{"type": "image", "data": PNG, "mimeType": "image/png"}])
        resources = [c["resource"] for c in res["content"] if c["type"] == "resource"]
        self.assertEqual(len(resources), 1)
        self.assertEqual(resources[0]["mimeType"], "text/csv")
        self.assertTrue(resources[0]["uri"].endswith("/artifacts/data.csv"))
        self.assertEqual(base64.b64decode(resources[0]["blob"]), b"a,b\n")

    def test_unauthorized_access_is_a_tool_error(self):
        def answer(job):
            doc = FakeExecutor.answer(self.py, job)
            doc.update(status="unauthorized_access", exit_code=1, result={"present": False},
                       unauthorized_access_type="network", detail="socket() denied",
                       denials=[{"rule": "runtime.network", "target": "socket"}])
            return doc
        self.py.answer = answer
        res = self.tool(self.session(), "run_code",
                        {"language": "python", "code": "def main():\n    return 1\n"})
        self.assertTrue(res["isError"])
        t = text_of(res)
        self.assertIn("status: unauthorized_access", t)
        self.assertIn("unauthorized_access_type: network", t)

    def test_session_tools_keep_a_session_for_the_caller(self):
        sid = self.session()
        res = self.tool(sid, "session_create", {})
        self.assertFalse(res["isError"], res)
        session = re.search(r"session_id: (py-[0-9a-f-]+)", text_of(res)).group(1)
        self.assertIn(session[3:], self.py.sessions)
        for code in ("import functools", "f = functools"):
            res = self.tool(sid, "session_exec", {"session_id": session, "code": code})
            self.assertFalse(res["isError"], res)
            self.assertIn("status: success", text_of(res))
        # the earlier cells bind f: the call resolves through them and is refused
        res = self.tool(sid, "session_exec", {"session_id": session,
                                                "code": "f.singledispatch(len)"})
        self.assertTrue(res["isError"], res)
        self.assertIn("call.forbidden", text_of(res))
        self.assertEqual(self.py.sessions[session[3:]]["history"],
                         "import functools\nf = functools\n")
        # another tenant cannot use it
        other = {"Authorization": "Bearer " + OTHER}
        res_b = self.call(self.session(auth=other), "tools/call",
                          {"name": "session_exec",
                           "arguments": {"session_id": session, "code": "1"}}, auth=other)
        self.assertTrue(res_b["result"]["isError"])
        self.assertIn("session_not_found", text_of(res_b["result"]))
        res = self.tool(sid, "session_close", {"session_id": session})
        self.assertFalse(res["isError"], res)
        self.assertNotIn(session[3:], self.py.sessions)
        for args in ({"session_id": "../x", "code": "1"}, {"code": "1"},
                     {"session_id": session, "code": 1}):
            body = self.call(sid, "tools/call", {"name": "session_exec", "arguments": args})
            self.assertEqual(body["error"]["code"], -32602, (args, body))

    def cancelled(self, sid, rid):
        st, _, _ = self.post({"jsonrpc": "2.0", "method": "notifications/cancelled",
                              "params": {"requestId": rid, "reason": "user interrupted"}}, sid)
        self.assertEqual(st, 202)

    def test_notifications_cancelled_cancels_the_running_job(self):
        sid = self.session()
        self.py.script = [(0, "stdout", {"text": "started\n"}), (20, "wait_cancel", None)]
        self.addCleanup(setattr, self.py, "script", [])
        cancels = len(self.py.cancels)
        s = sgtest.SSE(self.gw.url + "/mcp", {
            "jsonrpc": "2.0", "id": "run-9", "method": "tools/call", "params": {
                "name": "run_code", "_meta": {"progressToken": "p"}, "arguments": {
                    "language": "python", "code": "def main():\n    return 1\n"}}},
            headers={**AUTH, **ACCEPT, "Mcp-Session-Id": sid}, timeout=30)
        events = s.events()
        for _, name, data in events:
            if name and data.get("method") == "notifications/progress":
                break
        self.cancelled(sid, "run-9")
        final = [data for _, name, data in events if name][-1]
        s.close()
        self.assertEqual(final["id"], "run-9", final)
        text = text_of(final["result"])
        self.assertIn("cancelled", text)
        job = re.search(r"\[job ([0-9a-f]+)\]", text).group(1)
        self.assertEqual([c[0] for c in self.py.cancels[cancels:]], [job])
        # an id that is not in flight (ended, unknown, another session's) is ignored
        self.cancelled(sid, "run-9")
        self.cancelled(self.session(), 7)
        self.assertEqual(len(self.py.cancels), cancels + 1)

    def test_notifications_cancelled_cancels_the_running_cell(self):
        sid = self.session()
        session = re.search(r"session_id: (py-[0-9a-f-]+)",
                            text_of(self.tool(sid, "session_create", {}))).group(1)
        self.py.session_delay = 0.7  # each call to the fake takes this long
        self.addCleanup(setattr, self.py, "session_delay", 0)
        got = {}
        t = threading.Thread(target=lambda: got.update(b=self.call(
            sid, "tools/call", {"name": "session_exec",
                                "arguments": {"session_id": session, "code": "x = 1"}}, rid=41)))
        t.start()
        time.sleep(0.4)
        other = self.session()
        self.cancelled(other, 41)  # not this MCP session's call: ignored
        self.cancelled(sid, 41)
        t.join(30)
        self.assertFalse(got["b"]["result"]["isError"], got)
        calls = [c for c in self.py.session_calls if c[1].endswith("/cancel")]
        self.assertEqual(calls, [("POST", f"/v1/sessions/{session[3:]}/cancel", "t.a")])

    def test_session_files_upload_and_download(self):
        sid = self.session()
        res = self.tool(sid, "session_create", {})
        session = re.search(r"session_id: (py-[0-9a-f-]+)", text_of(res)).group(1)
        self.addCleanup(self.tool, sid, "session_close", {"session_id": session})
        png = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
        for name, data in (("chart.png", png), ("data.csv", b"a,b\n1,2\n"), ("empty.bin", b"")):
            res = self.tool(sid, "session_upload", {"session_id": session, "name": name,
                                                    "content_b64": base64.b64encode(data).decode()})
            self.assertFalse(res["isError"], res)
            self.assertIn(f"uploaded {name} ({len(data)} bytes)", text_of(res))
            self.assertEqual(self.py.sessions[session[3:]]["files"][name], data)
        # audited as the MCP endpoint's calls, with the tool's name
        self.gw.wait_for(lambda: any(
            (a.get("endpoint"), a.get("tool"), a.get("method"), a.get("session_id")) ==
            ("mcp", "session_upload", "PUT", session) for a in self.gw.audit_lines()),
            what="session_upload's audit line")
        res = self.tool(sid, "session_download", {"session_id": session, "name": "chart.png"})
        self.assertFalse(res["isError"], res)
        self.assertEqual(res["content"][1], {"type": "image", "mimeType": "image/png",
                                             "data": base64.b64encode(png).decode()})
        res = self.tool(sid, "session_download", {"session_id": session, "name": "data.csv"})
        self.assertEqual(res["content"][1]["resource"],
                         {"uri": f"sandgate://sessions/{session}/files/data.csv",
                          "mimeType": "application/octet-stream",
                          "blob": base64.b64encode(b"a,b\n1,2\n").decode()})
        res = self.tool(sid, "session_download", {"session_id": session, "name": "empty.bin"})
        self.assertEqual(res["content"][1]["resource"]["blob"], "")
        # the session API's errors are tool errors: a missing file, an unknown session
        res = self.tool(sid, "session_download", {"session_id": session, "name": "nope.txt"})
        self.assertTrue(res["isError"])
        self.assertIn("file_not_found (HTTP 404)", text_of(res))
        for tool, extra in (("session_download", {}), ("session_upload", {"content_b64": ""})):
            res = self.tool(sid, tool, dict(extra, session_id=session[:-32] + "0" * 32,
                                            name="x.txt"))
            self.assertTrue(res["isError"], res)
            self.assertIn("session_not_found", text_of(res))
        # names outside the job files' rule, bad base64, over the cap: refused before any call
        calls = len(self.py.session_calls)
        for name in ("../etc", "a/b", ".hidden", "main.py", "artifacts", "x" * 129, "a?b", ""):
            for tool, extra in (("session_download", {}), ("session_upload", {"content_b64": ""})):
                res = self.tool(sid, tool, dict(extra, session_id=session, name=name))
                self.assertTrue(res["isError"], (name, res))
                self.assertIn("bad_file_name", text_of(res))
        res = self.tool(sid, "session_upload", {"session_id": session, "name": "x.txt",
                                                "content_b64": "not base64!"})
        self.assertTrue(res["isError"])
        self.assertIn("bad_base64", text_of(res))
        self.assertEqual(len(self.py.session_calls), calls)
        # arguments against the schema are invalid params
        for tool, args in (("session_upload", {"session_id": session, "name": "x"}),
                           ("session_upload", {"session_id": session, "name": 1,
                                               "content_b64": ""}),
                           ("session_download", {"session_id": session}),
                           ("session_download", {"session_id": session, "name": "x",
                                                 "code": "1"}),
                           ("session_download", {"session_id": "../x", "name": "x"})):
            body = self.call(sid, "tools/call", {"name": tool, "arguments": args})
            self.assertEqual(body["error"]["code"], -32602, (tool, args, body))

    def test_session_upload_is_capped(self):
        gw = Gateway({"executors": {"python": [self.py.url], "nodejs": [self.js.url]},
                      "max_files_bytes": 1000}, tokens={"tenants": {"a": TOKENS["tenants"]["a"]}})
        self.addCleanup(lambda: self.assertEqual(gw.stop(), 0))
        st, hdrs, _ = gw.call("POST", "/mcp", init_body(), dict(ACCEPT, **AUTH))
        h = dict(ACCEPT, **AUTH, **{"Mcp-Session-Id": hdrs["mcp-session-id"]})

        def rpc(method, params):
            st, _, body = gw.call("POST", "/mcp", {"jsonrpc": "2.0", "id": 3, "method": method,
                                                   "params": params}, h)
            self.assertEqual(st, 200, body)
            return body["result"]

        def tool(name, args):
            return rpc("tools/call", {"name": name, "arguments": args})
        tools = {t["name"]: t for t in rpc("tools/list", {})["tools"]}
        self.assertIn("at most 1000 bytes decoded", tools["session_upload"]["description"])
        res = tool("session_create", {})
        session = re.search(r"session_id: (py-[0-9a-f-]+)", text_of(res)).group(1)
        self.addCleanup(tool, "session_close", {"session_id": session})
        for n, ok in ((1000, True), (1001, False)):
            res = tool("session_upload", {"session_id": session, "name": "f.bin",
                                          "content_b64": base64.b64encode(b"x" * n).decode()})
            self.assertEqual(res["isError"], not ok, (n, res))
        self.assertIn("file_too_large", text_of(res))

    def test_check_code_reports_violations_without_running(self):
        sid = self.session()
        before = self.js.calls
        res = self.tool(sid, "check_code", {"language": "nodejs", "code": "eval('1');"})
        self.assertTrue(res["isError"])
        self.assertRegex(text_of(res), r"reject under policy 'default'.*\n- line 1, column 1: "
                                       r".*\[rule [a-z.-]+\]")
        res = self.tool(sid, "check_code", {"language": "python", "code": "x = 1\n",
                                            "policy": "strict"})
        self.assertFalse(res["isError"])
        self.assertIn("accept under policy 'strict'", text_of(res))
        self.assertEqual(self.js.calls, before)
        audit = self.job_audit(res)
        self.assertEqual((audit["endpoint"], audit["tool"]), ("mcp", "check_code"))
        self.assertEqual(audit["verdict"], "accept")
        self.assertEqual(audit["policy"], "strict")

    def test_list_runtimes(self):
        sid = self.session()
        self.py.runtime = {
            "language": "python", "interpreter": {"name": "CPython", "version": "3.11.2"},
            "stdlib_modules": ["json", "subprocess"],
            "packages": [{"name": "numpy", "version": "1.24.2", "modules": ["numpy"]}],
            "sets": [{"set": "xl", "language": "python", "image": "sandgate/set-python-xl:t",
                      "preimport": [], "packages": [
                          {"name": "openpyxl", "version": "3.1.2", "kind": "wheel",
                           "source": "openpyxl-3.1.2-py2.py3-none-any.whl sha256:00",
                           "modules": ["openpyxl"]}]}]}
        self.addCleanup(setattr, self.py, "runtime", None)
        res = self.tool(sid, "list_runtimes", {})
        self.assertFalse(res["isError"])
        doc = json.loads(text_of(res))
        # what GET /v1/runtimes says: installed packages and what each policy lets import
        inst = doc["installed"]
        self.assertEqual(inst["python"]["packages"][0]["version"], "1.24.2")
        self.assertEqual(sorted(inst["python"]["policies"]["default"]["importable"]),
                         ["json", "numpy"])
        self.assertEqual(set(inst["python"]["policies"]), {"default", "strict"})
        xl = inst["python"]["sets"][0]  # a package set: its packages, what each policy allows
        self.assertEqual((xl["set"], xl["packages"][0]["version"]), ("xl", "3.1.2"))
        self.assertEqual(xl["policies"]["default"]["importable"], [])
        self.assertFalse(inst["nodejs"]["available"], "the fake node executor has no listing")
        self.assertEqual(doc["policy"]["name"], "default")
        langs = {l["language"]: l for l in doc["languages"]}
        self.assertIn("pandas", langs["python"]["imports"]["modules"])
        self.assertFalse(langs["python"]["network"])
        self.assertEqual(langs["nodejs"]["imports"]["mode"], "allow")
        res = self.tool(sid, "list_runtimes", {"policy": "permissive"})
        self.assertTrue(res["isError"])
        self.gw.wait_for(lambda: any(a.get("tool") == "list_runtimes" and a["endpoint"] == "mcp"
                                     for a in self.gw.audit_lines()), what="list_runtimes audit")


class McpTrustedNetworkCase(unittest.TestCase):
    """A tenant bound to a trusted source network reaches /mcp without a
    token, as it reaches the job endpoints; its calls are audited as its own."""

    def test_trusted_network_needs_no_token(self):
        py, js = FakeExecutor("python"), FakeExecutor("nodejs")
        gw = Gateway({"executors": {"python": [py.url], "nodejs": [js.url]}},
                     tokens={"tenants": {"lan": {"networks": ["127.0.0.0/8"]}}})
        try:
            st, hdrs, body = gw.call("POST", "/mcp", init_body(), ACCEPT)
            self.assertEqual(st, 200, body)
            h = dict(ACCEPT, **{"Mcp-Session-Id": hdrs["mcp-session-id"]})
            st, _, body = gw.call("POST", "/mcp", {
                "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                    "name": "run_code", "arguments": {
                        "language": "python", "code": "def main():\n    return 1\n"}}}, h)
            self.assertEqual(st, 200, body)
            self.assertFalse(body["result"]["isError"], body)
            gw.wait_for(lambda: any(a.get("tool") == "run_code" and a["tenant"] == "lan"
                                    for a in gw.audit_lines()), what="the tenant's audit line")
        finally:
            self.assertEqual(gw.stop(), 0)
            py.stop()
            js.stop()


INTEROP = os.path.join(sgtest.ROOT, "tests", "interop")


class McpInteropCase(unittest.TestCase):
    """The reference TypeScript SDK, installed from the lock file into build/."""

    def test_reference_sdk_client(self):
        npm = shutil.which("npm")
        self.assertIsNotNone(npm, "npm is needed for the interop test")
        where = os.path.join(sgtest.ROOT, "build", "mcp-interop")
        os.makedirs(where, exist_ok=True)
        for f in ("package.json", "package-lock.json", "mcp_client.mjs"):
            shutil.copy(os.path.join(INTEROP, f), where)
        sgtest.npm_ci_once(where)  # once per lock file
        py, js = FakeExecutor("python"), FakeExecutor("nodejs")
        py.script = [(0, "stdout", {"text": "line one\n"}), (0.2, "stderr", {"text": "warn"})]
        gw = Gateway({"executors": {"python": [py.url], "nodejs": [js.url]}},
                     tokens={"tenants": {"a": TOKENS["tenants"]["a"]}})
        try:
            r = subprocess.run(["node", "mcp_client.mjs", gw.url + "/mcp", TOKEN], cwd=where,
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr[-3000:])
            out = json.loads(r.stdout)
            self.assertEqual(out["protocolVersion"], "2025-06-18")
            self.assertEqual(out["server"]["name"], "sandgate")
            self.assertEqual({t["name"] for t in out["tools"]},
                             {"run_code", "check_code", "list_runtimes", "session_create",
                              "session_exec", "session_upload", "session_download",
                              "session_close"})
            for step in ("created", "cell", "uploaded", "downloaded", "closed"):
                self.assertFalse(out[step]["isError"], (step, out[step]))
            self.assertEqual(out["downloaded"]["content"][1]["resource"]["blob"],
                             base64.b64encode(b"a,b\n1,2\n").decode())
            self.assertEqual([v["history"] for v in py.sessions.values()], [])  # closed
            self.assertIn(("POST", "/v1/sessions", "t.a"), py.session_calls)
            self.assertFalse(out["run"]["isError"])
            self.assertIn('{"echo":{"n":21}}', text_of(out["run"]))
            self.assertTrue(out["rejected"]["isError"])
            self.assertIn("import.not-allowed", text_of(out["rejected"]))
            self.assertTrue(out["check"]["isError"])
            self.assertIn("python", text_of(out["runtimes"]))
            self.assertEqual(out["unknownTool"]["code"], -32602)
            self.assertEqual([(p["progress"], p["message"]) for p in out["progress"]],
                             [(1, "line one\n"), (2, "stderr: warn")])
            self.assertFalse(out["progressRun"]["isError"])
            self.assertIn("hello", text_of(out["progressRun"]))
            self.assertEqual([j.get("stream") for j in py.jobs], [None, True])
            self.assertEqual(py.calls, 2)
        finally:
            self.assertEqual(gw.stop(), 0)
            py.stop()
            js.stop()


if __name__ == "__main__":
    unittest.main()
