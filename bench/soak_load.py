#!/usr/bin/env python3
"""soak_load.py GATEWAY_URL TOKEN CONCURRENCY SECONDS CONTAINER...

The soak benchmark's load (bench/run-soak.sh): CONCURRENCY closed-loop
clients for SECONDS against the gateway (loopback only), each taking in turn
  - a job carrying input files at the caps (max_files_bytes: 4 MiB in 4
    files, POST /v1/run),
  - a session: open, upload a file at the cap (PUT .../files/NAME, 4 MiB),
    run a cell that reads it, close,
  - a streamed job ("stream": true) printing about 1 MiB of output in lines.
Every answer is classified: a result (HTTP 200 with a status; a streamed
job's final result event; a session call's 2xx), a documented busy answer
(503 executor_busy / server_busy / pool_busy / memory_busy / sessions_full
with Retry-After, 429 rate_limited; 429 too_many_sessions, the tenant's cap), or anything else (counted and the first
few kept). Meanwhile the RSS of each CONTAINER's main process (a daemon) is
sampled from the host's /proc every 0.5 s. Prints one JSON object."""
import base64
import http.client
import json
import os
import subprocess
import sys
import threading
import time

BUSY_CODES = {"executor_busy", "server_busy", "pool_busy", "memory_busy", "sessions_full",
              "rate_limited"}
# a documented refusal of a tenant's cap (docs/api.md), not of load
LIMIT_CODES = {"too_many_sessions"}
MIB = 1 << 20
FILES = {f"in{i}.bin": base64.b64encode(os.urandom(MIB)).decode() for i in range(4)}
FILE_CODE = ("import os\n\ndef main():\n"
             "    return sum(os.path.getsize(n) for n in sorted(os.listdir('.'))"
             " if n.startswith('in'))\n")
STREAM_CODE = ("import sys\n\ndef main():\n"
               "    line = 'x' * 1000\n"
               "    for i in range(1000):\n"
               "        print(line)\n"
               "    return 1\n")
UPLOAD = os.urandom(4 * MIB)


def host_port(url):
    assert url.startswith("http://127.") or url.startswith("http://[::1]"), "loopback only"
    hp = url.split("://", 1)[1].rstrip("/")
    host, _, port = hp.rpartition(":")
    return host.strip("[]"), int(port)


class Load:
    def __init__(self, url, token, containers):
        self.host, self.port = host_port(url)
        self.auth = {"Authorization": "Bearer " + token}
        self.lock = threading.Lock()
        self.counts = {"result": 0, "busy": 0, "other": 0}
        self.by_kind = {}
        self.others = []
        self.containers = containers
        self.pids = {c: int(subprocess.check_output(
            ["docker", "inspect", "-f", "{{.State.Pid}}", c], text=True).strip())
            for c in containers}
        self.peak = {c: 0 for c in containers}

    def request(self, method, path, body=None, headers=None, timeout=120):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        h = dict(self.auth)
        h.update(headers or {})
        data = body if body is None or isinstance(body, bytes) else json.dumps(body).encode()
        if data is not None and "Content-Type" not in h:
            h["Content-Type"] = "application/json"
        try:
            conn.request(method, path, body=data, headers=h)
            r = conn.getresponse()
            raw = r.read()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, raw
        except (OSError, http.client.HTTPException) as e:
            return 0, {}, repr(e).encode()
        finally:
            conn.close()

    def note(self, kind, what, st, hdrs, raw):
        cls = "other"
        if 200 <= st < 300:
            cls = "result"
        elif st in (503, 429):
            try:
                code = json.loads(raw)["error"]["code"]
            except (ValueError, KeyError, TypeError):
                code = None
            if (code in BUSY_CODES and "retry-after" in hdrs) or code in LIMIT_CODES:
                cls = "busy"
        with self.lock:
            self.counts[cls] += 1
            k = self.by_kind.setdefault(kind, {"result": 0, "busy": 0, "other": 0})
            k[cls] += 1
            if cls == "other" and len(self.others) < 8:
                self.others.append({"kind": kind, "what": what, "status": st,
                                    "body": raw[:300].decode("utf-8", "replace")})
        return cls

    def files_job(self):
        body = {"language": "python", "code": FILE_CODE, "files": FILES}
        st, h, raw = self.request("POST", "/v1/run", body)
        if st == 200 and json.loads(raw).get("status") is None:
            st = -1  # a 200 without a result is not an answer we document
        self.note("files_job", "run", st, h, raw)

    def session(self):
        st, h, raw = self.request("POST", "/v1/sessions", {"language": "python"})
        if self.note("session", "create", st, h, raw) != "result":
            return
        sid = json.loads(raw)["session_id"]
        try:
            st, h, raw = self.request("PUT", f"/v1/sessions/{sid}/files/data.bin", UPLOAD,
                                      {"Content-Type": "application/octet-stream"})
            if self.note("session", "upload", st, h, raw) == "result":
                st, h, raw = self.request("POST", f"/v1/sessions/{sid}/exec",
                                          {"code": "import os\nos.path.getsize('data.bin')"})
                self.note("session", "exec", st, h, raw)
        finally:
            st, h, raw = self.request("DELETE", f"/v1/sessions/{sid}")
            if st != 404:  # a session the executor lost is gone already
                self.note("session", "delete", st, h, raw)

    def streamed(self):
        body = {"language": "python", "code": STREAM_CODE, "stream": True}
        st, h, raw = self.request("POST", "/v1/run", body)
        if st == 200 and b"event: result" not in raw:
            st = -2  # a stream that ended without its result event
        self.note("stream", "run", st, h, raw[-300:] if st == -2 else raw[:300])

    def client(self, i, until):
        kinds = (self.files_job, self.session, self.streamed)
        n = i
        while time.monotonic() < until:
            kinds[n % len(kinds)]()
            n += 1

    def sample(self, stop):
        while not stop.is_set():
            for c, pid in self.pids.items():
                self.peak[c] = max(self.peak[c], rss_bytes(pid))
            stop.wait(0.5)


def rss_bytes(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def main():
    url, token, conc, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    load = Load(url, token, sys.argv[5:])
    stop = threading.Event()
    sampler = threading.Thread(target=load.sample, args=(stop,), daemon=True)
    sampler.start()
    t0 = time.monotonic()
    until = t0 + secs
    threads = [threading.Thread(target=load.client, args=(i, until)) for i in range(conc)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    sampler.join()
    print(json.dumps({"concurrency": conc, "seconds": round(time.monotonic() - t0, 1),
                      "answers": load.counts, "by_kind": load.by_kind, "others": load.others,
                      "peak_rss": load.peak}))


if __name__ == "__main__":
    main()
