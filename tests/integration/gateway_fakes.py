"""Test doubles for the gateway suites: a fake sandgate-executor (stdlib HTTP
server on a loopback port speaking POST /v1/exec and GET /healthz) that can be
told to answer slowly, fail, say pool_busy, or vanish, and counts what it got;
and a helper that starts the real sandgate binary with a config file."""
import json
import os
import secrets
import shutil
import tempfile
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import sgtest


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # keep test output quiet
        pass

    def setup(self):
        super().setup()
        with self.server.fake.lock:
            self.server.fake.open_connections += 1

    def finish(self):
        try:
            super().finish()
        finally:
            with self.server.fake.lock:
                self.server.fake.open_connections -= 1

    def _send(self, status, body, ctype="application/json"):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        fake = self.server.fake
        if self.path == "/healthz":
            fake.health_calls += 1
            ok = fake.healthy
            doc = {"status": "ok" if ok else "degraded"}
            if fake.max_jobs is not None:
                doc["max_jobs"] = fake.max_jobs
            if fake.boot_id:
                doc["boot_id"] = fake.boot_id
            doc.update(fake.health_extra)
            return self._send(200 if ok else 503, doc)
        if self.path.startswith("/v1/sessions"):
            return self._session()
        if self.path == "/v1/runtime" and fake.runtime is not None:
            with fake.lock:
                fake.headers.append(dict(self.headers))
            return self._send(200, fake.runtime)
        self._send(404, {"error": {"code": "not_found", "message": self.path}})

    def _stream(self, job, answer=None):
        """Answer a "stream": true job (or cell: its answer given) as the
        executor does: events from fake.script ((delay_s, event, data) with
        event "wait_cancel" waiting for a cancel of this job), then the
        result; fake.aborted is set when the gateway hung up on it."""
        fake = self.server.fake
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        cancelled = fake.cancel_event(job["job_id"])
        answer = answer if answer is not None else fake.answer(job)
        try:
            for delay, event, data in fake.script:
                if event == "wait_cancel":
                    if cancelled.wait(delay):
                        answer.update(status="cancelled", exit_code=-130, detail="cancelled")
                        break
                    continue
                time.sleep(delay)
                if event == "raw":
                    self.wfile.write(data.encode())
                elif event is None:
                    self.wfile.write(b": hb\n\n")
                else:
                    self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(f"event: result\ndata: {json.dumps(answer)}\n\n".encode())
            self.wfile.flush()
        except OSError:
            fake.aborted.set()

    def do_POST(self):
        fake = self.server.fake
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(n)
        if self.path.startswith("/v1/exec/") and self.path.endswith("/cancel"):
            job_id = self.path[len("/v1/exec/"):-len("/cancel")]
            with fake.lock:
                fake.cancels.append((job_id, dict(self.headers)))
            fake.cancel_event(job_id).set()
            return self._send(202, {"job_id": job_id, "running": True})
        if self.path.startswith("/v1/sessions"):
            return self._session(raw)
        if self.path != "/v1/exec":
            return self._send(404, {"error": {"code": "not_found", "message": self.path}})
        job = json.loads(raw)
        with fake.lock:
            fake.jobs.append(job)
            fake.headers.append(dict(self.headers))
        mode = fake.mode
        if fake.delay:
            time.sleep(fake.delay)
        if mode == "busy":
            return self._send(503, {"error": {"code": "pool_busy", "message": "no sandbox"},
                                    "status": "program_runner_error", "detail": "pool_busy"})
        if mode == "no_package_set":  # an executor whose sets cannot serve the job's modules
            return self._send(422, {"error": {"code": "no_package_set",
                                              "message": "no package set of this executor "
                                                         "installs 'a' together with 'b'"},
                                    "status": "program_runner_error"})
        if mode == "error500":
            return self._send(500, {"error": {"code": "internal", "message": "boom"}})
        if mode == "garbage":
            return self._send(200, b"this is not json", "text/plain")
        if mode == "ok_then_hangup":  # dies mid-job once a first job went well
            fake.mode = "hangup"
            mode = "ok"
        if mode == "hangup":
            self.close_connection = True
            self.connection.shutdown(2)
            return
        if job.get("stream") is True:
            return self._stream(job)
        self._send(200, fake.answer(job))


    def do_DELETE(self):
        self._session()

    def do_PUT(self):
        self._session(self.rfile.read(int(self.headers.get("Content-Length", "0"))))

    def _session(self, raw=b""):
        """A minimal session table (executors/PROTOCOL.md, "Sessions"),
        tenant-scoped like the real one."""
        cell = self._session_locked(raw)
        if cell:  # a streamed cell streams outside the lock
            self._stream({"job_id": "cell"}, cell)

    def _session_locked(self, raw):
        fake = self.server.fake
        tenant = self.headers.get("X-Sandgate-Tenant")
        path, _, query = self.path.partition("?")
        parts = path.split("/")[3:]  # after /v1/sessions
        if fake.session_delay:
            time.sleep(fake.session_delay)
        with fake.lock:
            fake.session_calls.append((self.command, path, tenant))
            if not parts:
                if self.command == "POST":
                    body = json.loads(raw)
                    sid = f"{fake.boot_id}-{secrets.token_hex(16)}"
                    fake.sessions[sid] = {"tenant": tenant, "label": body.get("label"),
                                          "history": "", "cells": 0, "body": body}
                    return self._send(201, fake.session_record(sid))
                mine = [s for s, v in fake.sessions.items() if v["tenant"] == tenant]
                return self._send(200, {"sessions": [fake.session_record(s) for s in mine],
                                        "open": len(mine), "executor_boot_id": fake.boot_id})
            sess = fake.sessions.get(parts[0])
            if not sess or sess["tenant"] != tenant:
                return self._send(404, {"error": {"code": "session_not_found",
                                                  "message": "no such session"}})
            rest = "/".join(parts[1:])
            if rest == "" and self.command == "DELETE":
                del fake.sessions[parts[0]]
                return self._send(204, b"")
            if rest == "" and self.command == "GET":
                rec = fake.session_record(parts[0])
                if query == "history=1":
                    rec["history"] = sess["history"]
                return self._send(200, rec)
            if rest == "cancel":
                return self._send(202, {"session_id": parts[0], "cancel_sent": True})
            if rest == "exec":
                cell = json.loads(raw)
                code = cell["code"]
                sess["history"] += code + "\n"
                sess["cells"] += 1
                fake.cells.append(cell)
                ans = fake.answer({"job_id": "cell", "arguments": {"code": code}})
                ans.update(session_id=parts[0], session_lost=False)
                return ans if cell.get("stream") is True else self._send(200, ans)
            if rest.startswith("files/") and self.command == "PUT":
                sess.setdefault("files", {})[rest[6:]] = raw
                return self._send(204, b"")
            if rest.startswith("files/") and self.command == "GET":
                if rest[6:] not in sess.get("files", {}):
                    return self._send(404, {"error": {"code": "file_not_found",
                                                      "message": "no such file"}})
                return self._send(200, sess["files"][rest[6:]], "application/octet-stream")
            return self._send(404, {"error": {"code": "not_found", "message": path}})


class _Server(ThreadingHTTPServer):
    # socketserver's default listen backlog is 5: a burst of new connections
    # would see dropped SYNs and connect timeouts a real executor never gives.
    request_queue_size = 256


class FakeExecutor:
    """A fake executor on 127.0.0.1:<port>. Attributes tests may set: mode
    ("ok", "busy", "error500", "garbage", "hangup", "ok_then_hangup"), delay
    (seconds before answering), healthy (what /healthz says), max_jobs (the
    capacity /healthz advertises, None = not said), health_extra (more fields
    of /healthz: pool, flavours, sessions), runtime (the listing GET
    /v1/runtime returns). open_connections counts the connections open to it now."""

    def __init__(self, name="python"):
        self.name = name
        self.mode = "ok"
        self.delay = 0
        self.healthy = True
        self.runtime = None  # GET /v1/runtime answer (None: 404, as an image without one)
        self.jobs = []
        self.headers = []
        self.health_calls = 0
        self.max_jobs = None
        self.health_extra = {}
        self.boot_id = secrets.token_hex(8)  # /healthz; sessions are routed by it
        self.sessions = {}                    # id -> {tenant, label, history, cells, body}
        self.cells = []                       # the bodies of the cells sent here
        self.session_calls = []               # (method, path, tenant)
        self.session_delay = 0                # seconds before a session call is answered
        self.open_connections = 0
        self.script = []  # a streamed job's events, see _Handler._stream
        self.cancels = []  # (job_id, headers) of POST /v1/exec/{job_id}/cancel
        self.cancel_events = {}
        self.aborted = threading.Event()
        self.status = "success"
        self.lock = threading.Lock()
        self.server = _Server(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.server.fake = self
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def cancel_event(self, job_id):
        with self.lock:
            return self.cancel_events.setdefault(job_id, threading.Event())

    def answer(self, job):
        return {
            "job_id": job["job_id"], "status": self.status, "stdout": "hello\n", "stderr": "",
            "exit_code": 0, "detail": None, "time_used_ms": 1.5, "memory_used_kb": 1024,
            "resource_limit_type": None, "unauthorized_access_type": None,
            "runtime_error_type": None, "artifacts": [],
            "result": {"present": True, "value": {"echo": job.get("arguments")},
                       "type": "json"},
            "limits": job.get("limits"), "clamped": [], "timings": {"wait_ms": 0.1, "run_ms": 1},
            "executor_only_field": "dropped by /run",
        }

    def session_record(self, sid):
        s = self.sessions[sid]
        return {"session_id": sid, "state": "idle", "created_at": 1, "last_used_at": 1,
                "expires_at": 601, "cells_run": s["cells"], "idle_timeout_s": 600,
                "max_lifetime_s": 3600, "history_bytes": len(s["history"]),
                "memory_used_kb": None, "label": s["label"], "container": "0123456789ab"}

    @property
    def calls(self):
        with self.lock:
            return len(self.jobs)

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def dead_url():
    """A loopback URL where nothing listens (connection refused)."""
    return f"http://127.0.0.1:{sgtest.free_port()}"


class Gateway:
    """The real sandgate started with a JSON config (written to a temp dir).
    Policies default to a copy of the shipped ones plus test policies."""

    def __init__(self, config=None, env=None, tokens=None, policies=None, start=True):
        self.dir = tempfile.mkdtemp(prefix="sgw-")
        self.port = sgtest.free_port()
        self.policies_dir = os.path.join(self.dir, "policies")
        shutil.copytree(os.path.join(sgtest.ROOT, "policies"), self.policies_dir,
                        ignore=shutil.ignore_patterns("*.md"))
        for name, doc in (policies or {}).items():
            self.write_policy(name, doc)
        self.audit_path = os.path.join(self.dir, "audit.log")
        cfg = {"port": self.port, "policies_dir": self.policies_dir,
               "audit_log": self.audit_path, "health_interval_ms": 200,
               "connect_timeout_ms": 500, "log_level": "debug"}
        if tokens is not None:
            self.tokens_path = os.path.join(self.dir, "tokens.json")
            self.write_tokens(tokens)
            cfg["tokens_file"] = self.tokens_path
        cfg.update(config or {})
        self.config_path = os.path.join(self.dir, "sandgate.json")
        with open(self.config_path, "w") as f:
            json.dump(cfg, f)
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = env or {}
        self.daemon = None
        if start:
            self.start()

    def start(self):
        self.daemon = sgtest.Daemon("sandgate", ["-c", self.config_path], env=self.env,
                                    ready_url=self.url + "/healthz")

    def write_policy(self, name, doc):
        tmp = os.path.join(self.dir, name + ".tmp")
        with open(tmp, "w") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
        os.replace(tmp, os.path.join(self.policies_dir, name + ".json"))

    def write_tokens(self, tokens):
        tmp = self.tokens_path + ".tmp"
        with open(tmp, "w") as f:
            f.write(tokens if isinstance(tokens, str) else json.dumps(tokens))
        os.replace(tmp, self.tokens_path)

    def call(self, method, path, body=None, headers=None, timeout=30):
        return sgtest.http(method, self.url + path, body, headers, timeout)

    def audit_lines(self):
        try:
            with open(self.audit_path) as f:
                return [json.loads(line) for line in f if line.strip()]
        except FileNotFoundError:
            return []

    def audit_line(self, request_id, timeout=10):
        """The audit line of request_id, waited for (the writer is a thread)."""
        found = []

        def seen():
            found[:] = [a for a in self.audit_lines() if a["request_id"] == request_id]
            return found
        self.wait_for(seen, timeout, what=f"the audit line of {request_id}")
        return found[0]

    def wait_for(self, predicate, timeout=10, what="condition"):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if predicate():
                return
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}")

    def stop(self):
        try:
            return self.daemon.stop() if self.daemon else 0
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


def gateway_for(py, js, **kw):
    """A gateway in front of one Python and one Node executor (anything with
    a .url), with the grace real sandboxes need."""
    return Gateway({"executors": {"python": [py.url], "nodejs": [js.url]},
                    "exec_grace_ms": 10000}, **kw)


class GatewayWithFakes(unittest.TestCase):
    """A test case whose setUp builds one gateway (self.gw) in front of a
    Python and a Node fake executor (self.py, self.js): tearDown stops all
    three, and an unclean gateway exit fails the test."""

    def tearDown(self):
        try:
            self.assertEqual(self.gw.stop(), 0)
        finally:
            self.py.stop()
            self.js.stop()


def policy_with(name, **python):
    """A copy of the shipped default policy renamed, with python keys replaced."""
    with open(os.path.join(sgtest.ROOT, "policies", "default.json")) as f:
        doc = json.load(f)
    doc["name"] = name
    doc["python"].update(python)
    return doc
