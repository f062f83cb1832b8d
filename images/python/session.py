"""sandgate Python runner, session mode (executors/PROTOCOL.md, "Sessions").

Loaded by runner.py before it forks, so both sides have it. A job line with
"session": true turns the one-shot runner into a session:

  parent (PID 1)                         child (the persistent interpreter)
  reads request lines from stdin         installs the run-time policy once,
  (each must carry the session key)      then runs one cell after another in
  cell -> the child, supervises it,      one namespace; the value of a final
    answers one nonce-stamped line       expression statement is the result
  cancel -> SIGINT, SIGKILL after grace  KeyboardInterrupt ends only the cell
  put/get/list files in /workspace

The session key is a secret only the executor and this process know: the
program can write to the container's stdin (/proc/1/fd/0), so a request
without the key is dropped and can never run a cell the gateway did not
check. A cell line carries no code path outside the child: the parent never
evaluates anything. Only the parent writes to the real stdout.
"""
import ast
import base64
import builtins
import errno
import hmac
import json
import linecache
import os
import select
import signal
import sys
import time
import traceback

KEY_MIN = 32
CANCEL_GRACE_S = 2.0          # SIGINT first; SIGKILL this long after
LINE_MAX = 48 << 20           # a request line (a cell or an uploaded file, base64)
FILE_MAX = 8 << 20            # one uploaded or downloaded file

LIST_MAX = 1000               # entries of a workspace listing
REPORT_SLACK = 64 << 10       # the child's report: the value plus this much
POLL_MS = 100


# ---------------------------------------------------------------- child side


class FileTooLarge(ValueError):
    """A download over FILE_MAX: answered as error file_too_large."""


def _filtered_traceback(exc, hidden):
    te = traceback.TracebackException.from_exception(exc)
    te.stack = traceback.StackSummary.from_list(
        [f for f in te.stack if f.filename not in hidden and not f.filename.startswith("<frozen ")])
    return "".join(te.format())


def _cell_value(rn, value):
    """The report of a cell's final value: JSON when it is JSON, else its repr
    (what a notebook shows)."""
    if value is None:
        return {"outcome": "ok", "present": False}
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        text.encode("utf-8")
        rn.value_beyond_int64(value)
        return {"outcome": "ok", "present": True, "value": value}
    except (TypeError, ValueError, RecursionError, UnicodeEncodeError):
        try:
            return {"outcome": "ok", "present": True, "value": repr(value)[:1 << 20]}
        except Exception as e:  # noqa: BLE001 - a broken __repr__ is the program's
            return {"outcome": "exception", "message": f"repr() of the result failed: {e}"[:1000]}


def _run_cell(rn, ns, number, code, hidden):
    name = f"<cell {number}>"
    try:
        tree = ast.parse(code, name)
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        linecache.cache[name] = (len(code), None, code.splitlines(True), name)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        exec(compile(tree, name, "exec"), ns)  # noqa: S102 - the checked cell
        value = eval(compile(last, name, "eval"), ns) if last else None  # noqa: S307
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        return _cell_value(rn, value)
    except BaseException as e:  # noqa: BLE001 - the program's failure is a result
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        sys.stderr.write(_filtered_traceback(e, hidden))
        return {"outcome": "exception", "message": f"{type(e).__name__}: {e}"[:1000]}


def child_loop(rn, res_fd, job_file):
    """Runs cells until the parent closes the job pipe. Each report is one
    JSON line on the report pipe (JSON text holds no raw newline)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    hidden = {rn.__file__, rn.RUNTIME_GUARD, __file__}
    ns = {"__name__": "__main__", "__builtins__": builtins}
    rn.child_report(res_fd, {"outcome": "ready"})
    write_all = rn.write_all
    write_all(res_fd, b"\n")
    number = 0
    while True:
        line = job_file.readline()
        if not line:
            return 0
        number += 1
        msg = json.loads(line)
        cell = msg["cell"]
        try:
            # A streamed cell's print() reaches the client line by line, as a
            # streamed job's does; the next plain cell buffers again.
            sys.stdout.reconfigure(line_buffering=msg.get("stream") is True)
        except (AttributeError, ValueError, OSError):
            pass  # an earlier cell replaced sys.stdout: its own buffering holds
        report = _run_cell(rn, ns, number, cell, hidden)
        rn.flush_std()
        try:
            data = json.dumps(report, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError, RecursionError):
            data = json.dumps({"outcome": "exception", "message": "result not serialisable"})
        write_all(res_fd, data.encode("utf-8", "backslashreplace") + b"\n")


# --------------------------------------------------------------- parent side

class LineReader:
    """Bounded lines from a raw fd (poll-friendly: no hidden buffer)."""

    def __init__(self, fd, limit, initial=b""):
        self.fd, self.limit, self.buf = fd, limit, bytearray(initial)

    def line(self):
        i = self.buf.find(b"\n")
        if i < 0:
            if len(self.buf) > self.limit:
                raise ValueError("request line too long")
            return None
        out = bytes(self.buf[:i])
        del self.buf[:i + 1]
        return out

    def fill(self):
        chunk = os.read(self.fd, 1 << 16)
        if not chunk:
            return False
        self.buf += chunk
        return True

    def blocking_line(self):
        while True:
            got = self.line()
            if got is not None:
                return got
            if not self.fill():
                return None


class Session:
    def __init__(self, rn, cfg, pid, fds, key, max_output):
        self.rn, self.cfg, self.pid, self.fds, self.key = rn, cfg, pid, fds, key
        self.max_output = max_output
        self.stdin = LineReader(0, LINE_MAX)
        self.report_buf = bytearray()
        self.lost = None
        self.runtime = None
        self.artifacts_seen = {}
        self.cap_report = max_output + REPORT_SLACK

    def send(self, nonce, fields):
        self.rn.report(fields, nonce)

    def key_ok(self, req):
        k = req.get("key") if isinstance(req, dict) else None
        return isinstance(k, str) and hmac.compare_digest(k.encode(), self.key.encode())

    # -- the child's report pipe

    def read_report(self, deadline):
        """One report line from the child, or None (deadline / child gone)."""
        while True:
            line = self._report_line()
            if line is not None:
                return line
            left = deadline - time.monotonic()
            if left <= 0 or not self._poll([self.fds["res_r"]], left):
                return None
            if not self._read_res():
                return None

    def _read_res(self):
        """What the report pipe holds now into the buffer; False at EOF."""
        chunk = os.read(self.fds["res_r"], 1 << 16)
        if not chunk:
            return False
        if len(self.report_buf) + len(chunk) > self.cap_report:
            raise ValueError("report larger than its cap")
        self.report_buf += chunk
        return True

    def _report_line(self):
        while True:
            i = self.report_buf.find(b"\n")
            if i < 0:
                return None
            line = bytes(self.report_buf[:i])
            del self.report_buf[:i + 1]
            if line:
                return line

    @staticmethod
    def _poll(fds, left):
        p = select.poll()
        for fd in fds:
            p.register(fd, select.POLLIN)
        return [fd for fd, _ in p.poll(max(left, 0) * 1000)]

    def start(self, runtime):
        self.runtime = runtime
        payload = {"session": True, "arguments": {}, "runtime": runtime}
        self.rn.write_all(self.fds["job_w"], (json.dumps(payload) + "\n").encode())
        line = self.read_report(time.monotonic() + 30)
        if line is None:
            return {"outcome": "runner_error", "exit_code": self.rn.EXIT_RUNNER,
                    "message": "the session's interpreter did not start"}
        rep = json.loads(line)
        if rep.get("outcome") != "ready":
            return {"outcome": "runner_error", "exit_code": self.rn.EXIT_RUNNER,
                    "message": str(rep.get("message"))[:1000]}
        return {"outcome": "ok", "session": "ready"}

    # -- one cell

    def run_cell(self, nonce, req):
        rn = self.rn
        code = req.get("cell")
        limits = req.get("limits") or {}
        if not isinstance(code, str) or not isinstance(limits, dict):
            return {"outcome": "bad_job", "exit_code": rn.EXIT_RUNNER, "message": "bad cell"}
        try:
            timeout_ms = rn.int_limit(limits, "timeout_ms", rn.DEFAULT_TIMEOUT_MS, rn.MAX_TIMEOUT_MS)
            cap = rn.int_limit(limits, "max_output_bytes", self.max_output, rn.MAX_MAX_OUTPUT)
        except rn.BadJob as e:
            return {"outcome": "bad_job", "exit_code": rn.EXIT_RUNNER, "message": str(e)}
        stream = req.get("stream", False)
        if not isinstance(stream, bool):
            return {"outcome": "bad_job", "exit_code": rn.EXIT_RUNNER,
                    "message": "'stream' must be a boolean"}
        rn.write_all(self.fds["job_w"], (json.dumps({"cell": code, "stream": stream}) + "\n").encode())
        # A streamed cell's output also goes out as stream frames while it runs,
        # as a streamed job's does (PROTOCOL.md).
        streamer = rn.Streamer(nonce, self.fds) if stream else None
        return self.supervise(nonce, timeout_ms, cap, streamer)

    def supervise(self, nonce, timeout_ms, cap, streamer=None):
        rn, fds = self.rn, self.fds
        out, err = bytearray(), bytearray()
        bufs = {fds["out_r"]: out, fds["err_r"]: err}
        over = None
        started = time.monotonic()
        deadline = started + timeout_ms / 1000.0
        interrupted, kill_at = None, None
        report = None
        watch = [fds["out_r"], fds["err_r"], fds["res_r"], fds["den_r"], 0]
        self.denials = bytearray()
        for fd in (fds["out_r"], fds["err_r"], fds["den_r"]):
            os.set_blocking(fd, False)
        dead = False
        while report is None and not dead:
            now = time.monotonic()
            if interrupted is None and now >= deadline:
                interrupted, kill_at = "timeout", now + CANCEL_GRACE_S
                self._interrupt()
            if kill_at is not None and now >= kill_at:
                break
            limit = (kill_at if kill_at is not None else deadline) - now
            due = streamer.due_in() if streamer else None
            wait = min(limit, POLL_MS / 1000.0, due if due is not None else limit)
            ready = self._poll(watch, wait)
            if streamer:
                streamer.tick()
            for fd in ready:
                if fd == 0:
                    hit = self._stdin_cancel(nonce)
                    if hit is None:
                        watch.remove(0)  # the executor went: the cell ends at its deadline
                    elif hit and interrupted is None:
                        interrupted, kill_at = "cancelled", time.monotonic() + CANCEL_GRACE_S
                        self._interrupt()
                    continue
                if fd == fds["res_r"]:
                    if not self._read_res_safe():
                        dead = True
                        break
                    report = self._report_line()
                    continue
                if fd == fds["den_r"]:
                    chunk = os.read(fd, 1 << 16)
                    if not chunk:
                        watch.remove(fd)
                    self.denials += chunk[:max(rn.DENIAL_BYTES_MAX - len(self.denials), 0)]
                    continue
                try:
                    chunk = os.read(fd, 1 << 16)
                except BlockingIOError:
                    continue
                if not chunk:
                    watch.remove(fd)  # the child closed it: it is going
                    continue
                buf = bufs[fd]
                room = cap - len(buf)
                buf += chunk[:max(room, 0)]
                if streamer:
                    streamer.add(fd, chunk[:max(room, 0)])
                if len(chunk) > room and over is None:
                    over = "stdout" if fd == fds["out_r"] else "stderr"
            if not ready and self._child_gone():
                break
        self._drain(bufs, cap, streamer)
        if streamer:
            streamer.finish()
        fields = {"stdout": rn.decode_text(out), "stderr": rn.decode_text(err),
                  "time_used_ms": round((time.monotonic() - started) * 1000.0, 3),
                  "memory_used_kb": self._memory_kb()}
        fields.update(self._classify(report, interrupted, over, cap))
        self._drain({fds["den_r"]: self.denials}, rn.DENIAL_BYTES_MAX)
        denials = rn.parse_denials(self.denials)
        killed = rn.kernel_denial(getattr(self, "_status", None),
                                  self.runtime) if self.runtime is not None else None
        if killed:  # seen by waitpid, whatever the program wrote
            denials = [killed] + denials[:rn.DENIALS_MAX - 1]
        if denials and fields["outcome"] not in ("runner_error", "bad_job"):
            fields.update(outcome="unauthorized", denials=denials, result={"present": False},
                          exit_code=0,
                          message=f"runtime.{denials[0]['type']}: {denials[0]['target']}")
        if not self.lost and fields["outcome"] in ("ok", "exception", "cancelled", "timeout"):
            arts, skipped = self._new_artifacts()
            fields["artifacts"] = arts
            if skipped:
                fields["artifacts_skipped"] = skipped
        if self.lost:
            fields["session_lost"] = True
        return fields

    def _classify(self, report, interrupted, over, cap):
        rn = self.rn
        if report is None:
            rn.kill_group(self.pid)
            status = self._reap()
            self.lost = "the session's interpreter ended"
            if interrupted:
                return {"outcome": interrupted if interrupted == "timeout" else "cancelled",
                        "exit_code": -124 if interrupted == "timeout" else -130,
                        "message": f"{interrupted}: the interrupt was not handled; the "
                                   "interpreter was killed and the session's state is gone"}
            sig = os.WTERMSIG(status) if status is not None and os.WIFSIGNALED(status) else 0
            code = os.WEXITSTATUS(status) if status is not None and os.WIFEXITED(status) else 0
            return {"outcome": "killed" if sig else "exception", "signal": sig,
                    "exit_code": -sig if sig else (code or 1),
                    "message": (f"the session's interpreter was killed by signal {sig}" if sig else
                                f"the session's interpreter exited with status {code}") +
                               "; the session's state is gone"}
        try:
            outcome, message, result = rn.parse_report(report)
        except rn.UnreadableReport as e:
            outcome, message, result = ("exception", f"unreadable report from the program: {e}",
                                        {"present": False})
        if interrupted == "timeout":
            return {"outcome": "timeout", "exit_code": rn.EXIT_TIMEOUT,
                    "message": "timeout_ms exceeded; the cell was interrupted"}
        if interrupted == "cancelled":
            return {"outcome": "cancelled", "exit_code": -130,
                    "message": "cancelled; the cell was interrupted"}
        if over:
            return {"outcome": "output_limit", "exit_code": rn.EXIT_OUTPUT,
                    "message": f"{over} larger than max_output_bytes ({cap})"}
        return {"outcome": outcome, "message": message, "result": result,
                "exit_code": 0 if outcome == "ok" else 1}

    def _read_res_safe(self):
        """False when the report pipe closed or overflowed (the program holds
        it and can fill it): the session cannot be trusted further."""
        try:
            return self._read_res()
        except (ValueError, OSError):
            return False

    def _interrupt(self):
        try:
            os.kill(self.pid, signal.SIGINT)
        except OSError:
            pass

    def _stdin_cancel(self, nonce):
        """Reads what arrived on stdin while a cell runs: only a keyed cancel
        of this cell counts; anything else is dropped. None at EOF."""
        if not self.stdin.fill():
            return None
        hit = False
        while True:
            line = self.stdin.line()
            if line is None:
                return hit
            try:
                req = json.loads(line)
            except ValueError:
                continue
            if self.key_ok(req) and req.get("cancel") == nonce:
                hit = True

    def _child_gone(self):
        try:
            pid, _ = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            return True
        if pid:
            self._status = _
            return True
        return False

    def _reap(self):
        status = getattr(self, "_status", None)
        if status is None:
            try:
                _, status = os.waitpid(self.pid, 0)
                self._status = status
            except ChildProcessError:
                pass
        return status

    def _drain(self, bufs, cap, streamer=None):
        for fd, buf in bufs.items():
            while True:
                try:
                    chunk = os.read(fd, 1 << 16)
                except (BlockingIOError, OSError):
                    break
                if not chunk:
                    break
                kept = chunk[:max(cap - len(buf), 0)]
                buf += kept
                if streamer:
                    streamer.add(fd, kept)

    def _memory_kb(self):
        """The interpreter's resident memory after the cell (gVisor's
        /proc/PID/status has VmRSS but no VmHWM peak)."""
        try:
            with open(f"/proc/{self.pid}/status", "rb") as f:
                for line in f:
                    if line.startswith(b"VmRSS:"):
                        return int(line.split()[1])
        except (OSError, ValueError, IndexError):
            pass
        return None

    def _artifact_sigs(self):
        """{name: (size, mtime_ns, inode)} of artifacts/ without reading a file."""
        sigs = {}
        try:
            with os.scandir(os.path.join(self.rn.WORKSPACE, self.rn.ARTIFACT_DIR)) as it:
                for e in it:
                    if len(sigs) >= LIST_MAX:
                        break
                    try:
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    sigs[e.name] = (st.st_size, st.st_mtime_ns, st.st_ino)
        except OSError:
            pass
        return sigs

    def _new_artifacts(self):
        with self.rn.JobFiles():
            return self._new_artifacts_as_job()

    def _new_artifacts_as_job(self):
        """Artifacts the cell wrote or changed (artifacts/, as for jobs): a
        cheap listing first, the files themselves only when one changed."""
        sigs = self._artifact_sigs()
        if sigs == self.artifacts_seen:
            return [], []
        changed = {n for n, s in sigs.items() if self.artifacts_seen.get(n) != s}
        self.artifacts_seen = sigs
        found, skipped = self.rn.collect_artifacts(self.cfg)
        return [a for a in found if a["name"] in changed], \
            [s for s in skipped if s["name"] in changed]

    # -- workspace files

    def file_op(self, req):
        with self.rn.JobFiles():
            return self._file_op(req)

    def _file_op(self, req):
        rn = self.rn
        op = req.get("op")
        try:
            if op == "list_files":
                return {"outcome": "ok", "files": self._list()}
            name = req.get("name")
            rn.check_name(name)
            if op == "put_file":
                data = req.get("content_b64")
                if not isinstance(data, str) or len(data) > (FILE_MAX // 3 + 1) * 4:
                    raise rn.BadJob(f"file content must be base64, at most {FILE_MAX} bytes")
                self._put(name, base64.b64decode(data, validate=True))
                return {"outcome": "ok"}
            if op == "get_file":
                return {"outcome": "ok", "content_b64": base64.b64encode(self._get(name)).decode()}
        except FileTooLarge as e:
            return {"outcome": "bad_job", "exit_code": rn.EXIT_RUNNER, "error": "file_too_large",
                    "message": str(e)}
        except (rn.BadJob, ValueError) as e:
            return {"outcome": "bad_job", "exit_code": rn.EXIT_RUNNER, "message": str(e)[:1000]}
        except FileNotFoundError:
            return {"outcome": "bad_job", "exit_code": rn.EXIT_RUNNER, "message": "no such file"}
        except OSError as e:
            full = e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
            out = {"outcome": "bad_job", "exit_code": rn.EXIT_RUNNER,
                   "message": "the workspace is full" if full
                   else f"cannot access the file: {e.strerror}"}
            if full:
                out["error"] = "workspace_full"
            return out
        return {"outcome": "bad_job", "exit_code": rn.EXIT_RUNNER, "message": "unknown op"}

    def _put(self, name, data):
        dirfd = os.open(self.rn.WORKSPACE, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600,
                         dir_fd=dirfd)
            try:
                if not os.fstat(fd).st_mode & 0o100000:
                    raise OSError(21, "not a regular file")
                try:
                    self.rn.write_all(fd, data)
                except OSError:
                    os.unlink(name, dir_fd=dirfd)  # a failed upload leaves no file
                    raise
            finally:
                os.close(fd)
        finally:
            os.close(dirfd)

    def _get(self, name):
        dirfd = os.open(self.rn.WORKSPACE, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dirfd)
            try:
                st = os.fstat(fd)
                if st.st_mode & 0o170000 != 0o100000:
                    raise OSError(21, "not a regular file")
                if st.st_size > FILE_MAX:
                    raise FileTooLarge(f"the file is {st.st_size} bytes: downloads are at most "
                                       f"{FILE_MAX} bytes")
                data = os.read(fd, FILE_MAX + 1)
            finally:
                os.close(fd)
        finally:
            os.close(dirfd)
        if len(data) > FILE_MAX:
            raise ValueError(f"file larger than {FILE_MAX} bytes")
        return data

    def _list(self):
        out = []
        with os.scandir(self.rn.WORKSPACE) as it:
            for e in it:
                if len(out) >= LIST_MAX:
                    break
                try:
                    if e.is_file(follow_symlinks=False):
                        out.append({"name": e.name, "size": e.stat(follow_symlinks=False).st_size})
                except OSError:
                    continue
        return sorted(out, key=lambda f: f["name"])

    # -- the request loop

    def serve(self):
        while True:
            try:
                line = self.stdin.blocking_line()
            except ValueError:
                return
            if line is None:
                return
            try:
                req = json.loads(line)
            except ValueError:
                continue
            if not self.key_ok(req):
                continue  # not from the executor
            nonce = self.rn.job_nonce(req)
            if nonce is None:
                continue
            if self.lost:
                self.send(nonce, {"outcome": "runner_error", "exit_code": self.rn.EXIT_RUNNER,
                                  "message": self.lost, "session_lost": True})
                continue
            if "cell" in req:
                fields = self.run_cell(nonce, req)
            elif "op" in req:
                fields = self.file_op(req)
            else:
                continue
            self.send(nonce, fields)


def serve(rn, cfg, pid, fds, raw):
    """The whole session: start the child's loop, answer the start line,
    then serve requests until stdin closes. Returns the exit status."""
    key = raw.get("key")
    nonce = rn.job_nonce(raw)
    if not isinstance(key, str) or len(key) < KEY_MIN or not key.isalnum():
        rn.report({"outcome": "bad_job", "exit_code": rn.EXIT_RUNNER,
                   "message": "a session needs a key of at least 32 [A-Za-z0-9]"}, nonce)
        return 0
    runtime = raw.get("runtime")
    limits = raw.get("limits") or {}
    try:
        max_output = rn.int_limit(limits if isinstance(limits, dict) else {}, "max_output_bytes",
                                  rn.DEFAULT_MAX_OUTPUT, rn.MAX_MAX_OUTPUT)
        if runtime is not None and not isinstance(runtime, dict):
            raise rn.BadJob("'runtime' must be an object")
        with rn.JobFiles():
            os.mkdir(os.path.join(rn.WORKSPACE, rn.ARTIFACT_DIR), 0o700)
    except rn.BadJob as e:
        rn.report({"outcome": "bad_job", "exit_code": rn.EXIT_RUNNER, "message": str(e)}, nonce)
        return 0
    except OSError as e:
        rn.report({"outcome": "runner_error", "exit_code": rn.EXIT_RUNNER,
                   "message": f"cannot prepare {rn.WORKSPACE}: {e.strerror}"}, nonce)
        return 0
    s = Session(rn, cfg, pid, fds, key, max_output)
    fields = s.start(runtime)
    rn.report(fields, nonce)
    if fields["outcome"] != "ok":
        rn.kill_group(pid)
        return 0
    s.serve()
    rn.kill_group(pid)
    return 0
