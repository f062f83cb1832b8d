"""sandgate Python runner: the main process of a sandbox container.

Runner side of executors/PROTOCOL.md. Started by the executor's warm pool as
`python3 -I -B /opt/sandgate/runner.py` before any job exists:

  parent (this process, PID 1)        child (forked at start-up)
  holds the container's real stdout   fd 0 = /dev/null, fd 1/2 = pipes to the parent
  reads one job line from stdin       pre-imports, then blocks on the job pipe
  writes input files and main.py      imports main.py as module `main`, calls
  hands the arguments to the child    main(**arguments), sends the outcome back
  reads stdout/stderr (capped), the   over a dedicated result pipe, exits
  result pipe, enforces timeout_ms
  collects artifacts, writes the ONE result line, exits

Only the parent writes to the real stdout, so nothing the program prints can
forge a result. The child's own report is trusted only for what the program
could produce anyway (its return value or exception); exit status, signal,
time, memory, output and artifacts are the parent's (wait4, its clock, its
reads).

Started as uid 0 (the image's org.sandgate.identity=split), the runner forks
the child into its own PID namespace, and the child makes its own mount
namespace and root and drops to uid 65534 before the job exists
(isolation.py, next to this file): the runner's files, its /proc and its
pipes are then out of the job's reach by the kernel's rules.

Tunables (environment, read once at start; defaults in brackets):
  SANDGATE_PREIMPORT           comma-separated modules the child imports before
                               the job arrives [""]; e.g. "numpy,pandas"
  SANDGATE_MAX_JOB_BYTES       longest accepted job line [50331648]
  SANDGATE_MAX_INPUT_FILES     input files per job [64]
  SANDGATE_MAX_INPUT_BYTES     decoded input files in total [16777216]
  SANDGATE_ARTIFACT_MAX_FILES  artifacts returned [10]
  SANDGATE_ARTIFACT_MAX_BYTES  size of one artifact [10485760]
  SANDGATE_ARTIFACT_MAX_TOTAL  artifacts in total [20971520]
  SANDGATE_RUNTIME_LIB         the run-time seccomp library
                               [/opt/sandgate/libsandgate_rt.so]

Run-time policy: a job with "runtime" (executors/PROTOCOL.md) has it enforced
in the child before main.py is imported (runtime_guard.py, next to this file:
seccomp + an audit hook). Every denial goes at once down a pipe only this
process reads; any denial makes the outcome "unauthorized" whatever the
program did afterwards.
"""
import base64
import json
import math
import os
import re
import select
import signal
import sys
import time

PROTOCOL_VERSION = 1
WORKSPACE = "/workspace"
MAIN_FILE = "main.py"
ARTIFACT_DIR = "artifacts"
EXIT_TIMEOUT = -124
EXIT_OUTPUT = -125
EXIT_RUNNER = -3
DEFAULT_TIMEOUT_MS = 10000
MAX_TIMEOUT_MS = 600000
DEFAULT_MAX_OUTPUT = 1 << 20
MAX_MAX_OUTPUT = 64 << 20
# The input file name rule every layer checks (C: common/sg_file_name.h):
# 1..128 of [A-Za-z0-9._-], no leading dot, no "..".
FILE_NAME_RE = re.compile(r"[A-Za-z0-9._-]{1,128}")
READ_CHUNK = 65536
PR_SET_DUMPABLE = 4
RUNTIME_GUARD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runtime_guard.py")
SESSION_MODULE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "session.py")
ISOLATION_MODULE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "isolation.py")
REKEY_MODULE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rekey.py")
# Started as uid 0 (an image labelled org.sandgate.identity=split, given only
# the capabilities isolation.py needs): the job gets its own uid, PID and
# mount namespace and file system view (isolation.py). Any other uid: the
# job runs as the runner's uid, as before.
SPLIT = os.getuid() == 0
JOB_UID = 65534
# The executor's test-only switch (--test-guard-off): the in-process layer
# (audit hook, import gate) is left out; the kernel filter, the identity and
# view, and this process's observations stay. Nothing a tenant sends sets it.
GUARD_OFF = os.environ.get("SANDGATE_TEST_GUARD_OFF") == "1"
# The kernel filter's flag (images/runtime/rt_filter.h): its hard refusals
# kill the job's process with SIGSYS, which this process sees from wait4.
RT_KILL_REFUSALS = 0x4
# Its no-new-code flag: no executable mapping once the job runs. Set with the
# identity split (this process maps the image's extension modules before the
# fork, isolation.map_native, and the child inherits them), for a policy that
# refuses native code and processes (a program it started could load no
# library).
RT_NO_NEW_CODE = 0x8
# zoneinfo's zone list, written by the image build (Dockerfile): a first line
# "tzpath <TZPATH joined by ':'>", then one zone key a line.
ZONE_KEYS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "zoneinfo_keys.txt")
# matplotlib's font list, written by the image build (list_runtime.py).
MPL_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mpl")
MPL_FONT_LIST_RE = re.compile(r"fontlist-v[0-9]{1,6}\.json")
MPL_FONT_LIST_MAX = 4 << 20
DENIALS_MAX = 16
DENIAL_BYTES_MAX = 64 << 10
EXIT_DENIAL_LOST = 86  # runtime_guard.py: a denial could not be recorded
# Written by the child on the denial pipe once the run-time policy is in
# place, before the program runs: an empty record, which parse_denials skips.
STARTED_MARK = b"\n"
NONCE_RE = re.compile(r"[A-Za-z0-9]{16,128}")
# How often the parent looks for an exited child while a descendant still
# holds the output pipes open.
EXIT_POLL_S = 0.1
# A child the kernel filter killed that gVisor leaves a zombie (Run.reap_stuck).
STUCK_CHECK_S = 0.05
STUCK_CHECKS = 3
# Stream frames (executors/PROTOCOL.md, "Stream frames"): output is sent at a
# newline or at most this long after its first unsent byte, in frames of at
# most STREAM_FRAME_MAX bytes of text.
STREAM_FLUSH_S = 0.05
STREAM_FRAME_MAX = 16 << 10
# Deepest result value, in containers (common/json_raw.h: SG_JSON_RESULT_DEPTH_MAX).
RESULT_MAX_DEPTH = 512
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1

MIME_TYPES = {
    "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
    "svg": "image/svg+xml", "pdf": "application/pdf", "csv": "text/csv",
    "json": "application/json", "txt": "text/plain", "html": "text/html",
    "md": "text/markdown", "xlsx":
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "xls": "application/vnd.ms-excel", "docx":
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
}


def env_int(name, default, low, high):
    raw = os.environ.get(name, "")
    try:
        value = int(raw) if raw else default
    except ValueError:
        value = default
    return min(max(value, low), high)


class Config:
    def __init__(self):
        self.preimport = [m.strip() for m in os.environ.get("SANDGATE_PREIMPORT", "").split(",")
                          if m.strip()]
        self.max_job = env_int("SANDGATE_MAX_JOB_BYTES", 48 << 20, 1 << 10, 1 << 30)
        self.max_files = env_int("SANDGATE_MAX_INPUT_FILES", 64, 0, 4096)
        self.max_files_bytes = env_int("SANDGATE_MAX_INPUT_BYTES", 16 << 20, 0, 1 << 30)
        self.art_files = env_int("SANDGATE_ARTIFACT_MAX_FILES", 10, 0, 1000)
        self.art_bytes = env_int("SANDGATE_ARTIFACT_MAX_BYTES", 10 << 20, 0, 1 << 30)
        self.art_total = env_int("SANDGATE_ARTIFACT_MAX_TOTAL", 20 << 20, 0, 1 << 30)
        self.runtime_lib = os.environ.get("SANDGATE_RUNTIME_LIB",
                                          "/opt/sandgate/libsandgate_rt.so")


class BadJob(Exception):
    """The job line is unusable; reported as outcome bad_job."""


class RunnerError(Exception):
    """The sandbox itself is unusable (e.g. no writable workspace)."""


def value_beyond_int64(value):
    """Walks a result value (after json.dumps accepted it: no cycles) without
    recursion. True when an integer in it lies outside the signed 64-bit range:
    the value then travels as JSON text (result.value_json), because the
    executor's and the gateway's JSON parser (jansson) stops at int64. Raises
    ValueError for what JSON cannot carry: containers nested deeper than
    RESULT_MAX_DEPTH, NaN/Infinity, integers beyond a double's range."""
    big = False
    stack = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (dict, list, tuple)):
            if depth >= RESULT_MAX_DEPTH:
                raise ValueError(f"nested deeper than {RESULT_MAX_DEPTH} levels")
            stack.extend((c, depth + 1) for c in (v.values() if isinstance(v, dict) else v))
        elif isinstance(v, bool) or v is None or isinstance(v, str):
            continue
        elif isinstance(v, int):
            if not INT64_MIN <= v <= INT64_MAX:
                try:
                    float(v)
                except OverflowError:
                    raise ValueError("an integer too large for a JSON number "
                                     "(beyond 1.8e308)") from None
                big = True
        elif isinstance(v, float) and not math.isfinite(v):
            raise ValueError(f"{v!r} is not a JSON number")
    return big


def write_all(fd, data):
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


# ---------------------------------------------------------------- child side

def child_setup(keep, close):
    """Runs in the fresh child: new process group (so the parent can kill
    everything the program starts), no access to the container's stdin or
    stdout, stdout/stderr on pipes."""
    os.setpgid(0, 0)
    for fd in close:
        os.close(fd)
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(keep["out"], 1)
    os.dup2(keep["err"], 2)
    os.close(keep["out"])
    os.close(keep["err"])
    # The streams inherited from the parent point at fds 0-2 already; make
    # sure they speak UTF-8 whatever the locale says.
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(encoding="utf-8", errors="backslashreplace")


def child_sys_path():
    """No writable directory on the import path, the workspace included:
    input files are data (a file named json.py or pandas.py must not be
    imported instead of the module); main.py is loaded by its path."""
    sys.path[:] = [p for p in sys.path if p and not os.access(p, os.W_OK)
                   and not p.startswith(WORKSPACE)]


def flush_std():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


def child_report(res_fd, message):
    flush_std()
    write_all(res_fd, json.dumps(message, ensure_ascii=False).encode("utf-8"))


def print_traceback(exc):
    """The program's traceback without the runner's own frames."""
    import traceback
    te = traceback.TracebackException.from_exception(exc)
    te.stack = traceback.StackSummary.from_list(
        [f for f in te.stack if f.filename not in (__file__, RUNTIME_GUARD)
         and not f.filename.startswith("<frozen ")])
    sys.stderr.write("".join(te.format()))


def child_run_script():
    """Script mode ("mode": "script", Dify's sandbox API): runs main.py as the
    program itself, as `__main__`, and calls nothing. Returns (outcome, value)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("__main__", os.path.join(WORKSPACE, MAIN_FILE))
    module = importlib.util.module_from_spec(spec)
    sys.modules["__main__"] = module
    spec.loader.exec_module(module)
    return "ok", None


def child_call_main(arguments, script=False):
    """Imports main.py and calls main(). Returns (outcome, value)."""
    if script:
        return child_run_script()
    import importlib.util
    spec = importlib.util.spec_from_file_location("main", os.path.join(WORKSPACE, MAIN_FILE))
    module = importlib.util.module_from_spec(spec)
    sys.modules["main"] = module
    spec.loader.exec_module(module)
    fn = getattr(module, "main", None)
    if not callable(fn):
        return "no_main", None
    value = fn(**arguments)
    if hasattr(type(value), "__await__"):
        import asyncio

        async def wait(awaitable):
            return await awaitable
        value = asyncio.run(wait(value))
    return "ok", value


def child_outcome(arguments, script=False):
    """Runs the job in the child: (exit status, report, JSON text of the
    return value or None)."""
    try:
        outcome, value = child_call_main(arguments, script)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if e.code is not None and not isinstance(e.code, int):
            sys.stderr.write(f"{e.code}\n")
        if code == 0:
            return code, {"outcome": "ok", "present": False}, None
        return code, {"outcome": "exception", "message": f"the program called exit({code})"}, None
    except BaseException as e:  # noqa: BLE001 - the program's failure is a result
        print_traceback(e)
        return 1, {"outcome": "exception", "message": f"{type(e).__name__}: {e}"[:1000]}, None
    if outcome == "no_main":
        return 1, {"outcome": "no_main", "message": "main.py defines no callable main()"}, None
    if value is None:
        return 0, {"outcome": "ok", "present": False}, None
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        text.encode("utf-8")
    except (TypeError, ValueError, RecursionError, UnicodeEncodeError) as e:
        msg = (f"main() returned a value that is not JSON-serialisable "
               f"({type(value).__name__}): {e}"[:1000])
        sys.stderr.write(msg + "\n")
        return 1, {"outcome": "exception", "message": msg}, None
    try:
        value_beyond_int64(value)
    except ValueError as e:
        msg = f"main() returned a value that JSON cannot carry: {e}"[:1000]
        sys.stderr.write(msg + "\n")
        return 1, {"outcome": "exception", "message": msg}, None
    return 0, {"outcome": "ok", "present": True}, text


def child_run(fds, arguments, script=False):
    """Runs the job, reports and exits. The report carries what only the
    program can say (its return value or exception); its exit status, signal
    and peak memory are what the parent's wait4 sees (Run.reap)."""
    code, report, text = child_outcome(arguments, script)
    flush_std()
    data = json.dumps(report, ensure_ascii=False)
    if text is not None:
        data = data[:-1] + ',"value":' + text + "}"
    write_all(fds["res_w"], data.encode("utf-8"))
    return code


def child_load_guard(cfg):
    """The run-time guard module, the private copy its import gate uses and
    the seccomp installer, all loaded before the job (off the request's
    path); None when the image lacks them (then a job with a run-time policy
    is refused: fail closed)."""
    import importlib.util
    try:
        spec = importlib.util.spec_from_file_location("sandgate_runtime_guard", RUNTIME_GUARD)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module, module.load_private_copy(), module.load_seccomp(cfg.runtime_lib)
    except (OSError, ImportError):
        return None


def child_install_runtime(cfg, guard, rt, den_fd, res_fd):
    """Installs the job's run-time policy; on failure reports runner_error
    and exits: the program never runs unguarded. With the identity split the
    kernel filter's hard refusals kill the process (the parent reports
    them); with GUARD_OFF only the kernel filter is installed."""
    try:
        if guard is None:
            raise OSError("the run-time guard is missing from the image")
        module, private, seccomp = guard
        extra = RT_KILL_REFUSALS if SPLIT else 0
        if SPLIT and not rt.get("native_code") and not rt.get("processes"):
            extra |= RT_NO_NEW_CODE
        if GUARD_OFF:
            module.install_seccomp(rt, seccomp, extra)
        else:
            module.install(rt, den_fd, WORKSPACE, seccomp, private, extra)
    except Exception as e:  # noqa: BLE001 - any failure here is the sandbox's
        child_report(res_fd, {"outcome": "runner_error",
                              "message": f"cannot enforce the run-time policy: {e}"[:1000]})
        os._exit(70)


EGRESS_HEAD_MAX = 8192


def child_network(proxy):
    """A networked job (README, "Network"): the sandbox has no resolver and
    no route out; every connection goes through the egress proxy, which
    decides by host against the job's allow-list. requests and urllib read
    the proxy environment; whatever else connects by name through
    socket.create_connection (http.client, smtplib, ...) gets a CONNECT
    tunnel, so no name is ever looked up here."""
    if not proxy.startswith("http://"):
        return
    for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        os.environ[k] = proxy
    for k in ("no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY"):
        os.environ.pop(k, None)
    import socket
    host, _, port = proxy[len("http://"):].rstrip("/").rpartition(":")
    paddr = (host, int(port))
    direct = socket.create_connection

    def create_connection(address, timeout=socket._GLOBAL_DEFAULT_TIMEOUT,
                          source_address=None, **kw):
        if (address[0], int(address[1])) == paddr:
            return direct(address, timeout, source_address, **kw)
        return egress_tunnel(direct, paddr, address[0], int(address[1]), timeout)

    socket.create_connection = create_connection


def egress_tunnel(direct, paddr, host, port, timeout):
    """A socket connected to host:port through the proxy's CONNECT."""
    hp = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    s = direct(paddr, timeout)
    try:
        s.sendall(f"CONNECT {hp} HTTP/1.1\r\nHost: {hp}\r\n\r\n".encode("ascii"))
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = s.recv(1)  # byte by byte: nothing of the tunnel is read here
            if not chunk or len(head) > EGRESS_HEAD_MAX:
                raise ConnectionRefusedError(f"sandgate egress: no answer to CONNECT {hp}")
            head += chunk
        status = head.split(b" ", 2)[1:2]
        if status != [b"200"]:
            raise ConnectionRefusedError(
                f"sandgate egress: the connection to {hp} was refused (proxy answered "
                f"{status[0].decode('latin-1') if status else '?'}): it is not in this job's "
                "network allow-list")
        return s
    except BaseException:
        s.close()
        raise


def child_zoneinfo_keys():
    """zoneinfo.available_timezones() answered from the list the image build
    wrote. The stdlib function opens every file under /usr/share/zoneinfo
    (~1,800) to read its header: about 0.4 s of file calls under gVisor each
    time, which every pandas import pays (pytz builds its zone list with it).
    The root file system is read-only, so the list cannot differ from what the
    build saw while the search path is the one it saw; a program that moves
    the path (zoneinfo.reset_tzpath) gets the stdlib's walk."""
    try:
        with open(ZONE_KEYS, encoding="ascii") as f:
            head, *keys = f.read().split("\n")
    except (OSError, ValueError):
        return
    import zoneinfo
    import zoneinfo._tzpath as tzpath
    if head != "tzpath " + ":".join(tzpath.TZPATH):
        return
    built_for, walk, keys = tzpath.TZPATH, tzpath.available_timezones, frozenset(filter(None, keys))

    def available_timezones():
        return set(keys) if tzpath.TZPATH == built_for else walk()
    available_timezones.__doc__ = walk.__doc__
    tzpath.available_timezones = zoneinfo.available_timezones = available_timezones


def read_font_list():
    """(name, bytes) of matplotlib's font list the image build wrote
    (list_runtime.py), read before the job's view; None without one."""
    try:
        names = [n for n in os.listdir(MPL_DIR) if MPL_FONT_LIST_RE.fullmatch(n)]
        if len(names) != 1:
            return None
        with open(os.path.join(MPL_DIR, names[0]), "rb") as f:
            data = f.read(MPL_FONT_LIST_MAX + 1)
        return (names[0], data) if len(data) <= MPL_FONT_LIST_MAX else None
    except OSError:
        return None


def child_probes(font_list):
    """Libraries that start a process to probe the machine at import time,
    answered before the job as the process would answer in this image:
    platform.processor() (`uname -p` prints "unknown", which platform reports
    as ""; pandas asks), and matplotlib's font list (its scan runs `fc-list`,
    which the image lacks), copied where matplotlib looks for it. Once the
    kernel filter refuses processes such a probe kills the job's process
    (the audit hook, when on, stops it first and quietly)."""
    import platform
    platform._Processor.get_linux = lambda: ""
    conf = os.environ.get("MPLCONFIGDIR")
    if not font_list or not conf or not conf.startswith("/tmp/"):
        return
    try:
        os.makedirs(conf, mode=0o700, exist_ok=True)
        with open(os.path.join(conf, font_list[0]), "xb") as f:
            f.write(font_list[1])
    except OSError:
        pass


def child_isolate(isolation, setup_error):
    """With the identity split: the job's view and identity (isolation.py),
    before anything of the job exists. Returns the reason it failed, or
    None; a job is then refused (child_main), never run as root."""
    if not SPLIT or setup_error:
        return setup_error
    try:
        isolation.enter_view()
        isolation.drop_identity()
        os.chdir(WORKSPACE)
    except OSError as e:
        return f"cannot isolate the job: {e}"
    return None


def child_rekey(rekey, generators, setup_error):
    """Every random generator the job could inherit re-keyed from os.urandom
    (rekey.py): sandboxes restored from one checkpoint share this process's
    memory. Returns the reason a job must be refused, or None."""
    if setup_error:
        return setup_error
    if rekey is None:
        return "cannot re-key the random generators: rekey.py did not load"
    try:
        rekey.rekey(generators)
    except Exception as e:  # noqa: BLE001 - refuse the job rather than share keys
        return f"cannot re-key the random generators: {type(e).__name__}: {e}"
    return None


def child_main(cfg, fds, isolation=None, setup_error=None, rekey=None):
    """The child's whole life: set up, pre-import, wait for the job, run it.
    rekey: rekey.py (loaded by the parent), or None when it could not be: a
    job is then refused, never run on generators it may share."""
    code = 70
    try:
        child_setup({"out": fds["out_w"], "err": fds["err_w"]},
                    [fds["job_w"], fds["out_r"], fds["err_r"], fds["res_r"], fds["den_r"],
                     fds["ready_r"]])
        guard = child_load_guard(cfg)
        child_zoneinfo_keys()
        session_source = read_session_source()  # the runner's files are not in the view
        font_list = read_font_list()
        setup_error = child_isolate(isolation, setup_error)
        child_probes(font_list)
        if os.environ.get("SANDGATE_EGRESS_PROXY"):
            import socket  # noqa: F401 - a networked sandbox: off the job's path (~40 ms)
        for name in cfg.preimport:
            try:
                __import__(name)
            except Exception:  # noqa: BLE001 - a missing optional module is not fatal
                pass
        # What a checkpoint of this warm child would hold (rekey.py): found
        # now, off the job's path; re-keyed when the job arrives.
        generators = rekey.find() if rekey else None
        os.close(fds["ready_w"])  # the parent tells the executor: warm
        job_file = os.fdopen(fds["job_r"], "rb")
        raw = job_file.readline()
        if not raw:  # the parent gave up on the job (bad_job or exit)
            os._exit(0)
        payload = json.loads(raw)
        setup_error = child_rekey(rekey, generators, setup_error)
        arguments = payload["arguments"]
        if setup_error:
            child_report(fds["res_w"], {"outcome": "runner_error", "message": setup_error[:1000]})
            os._exit(70)
        if (payload.get("runtime") or {}).get("network"):
            child_network(os.environ.get("SANDGATE_EGRESS_PROXY", ""))
        if payload.get("stream"):
            # A streamed job's print() reaches the client line by line, as
            # on a terminal, not when an 8 KiB pipe buffer fills.
            sys.stdout.reconfigure(line_buffering=True)
        # Session mode (the parent has loaded the module already, so it is
        # there), before the run-time policy, which would stop its imports.
        session = load_session_module(session_source) if payload.get("session") else None
        if payload.get("runtime") is not None:
            child_install_runtime(cfg, guard, payload["runtime"], fds["den_w"], fds["res_w"])
        if payload.get("runtime") is not None or SPLIT:
            # The program starts now: from here on a runner_error report is
            # the program's own writing (see STARTED_MARK).
            write_all(fds["den_w"], STARTED_MARK)
        # This frame stays on the stack under the job's: a frame walk (a
        # library's sys._getframe on the job's behalf) must find nothing of
        # the guard here (its module's globals are what its checks read).
        guard = None
        child_sys_path()
        if session:
            code = session.child_loop(sys.modules[__name__], fds["res_w"], job_file)
        else:
            job_file.close()
            code = child_run(fds, arguments, payload.get("script") is True)
    except BaseException:  # noqa: BLE001 - never fall back into the parent's code
        code = 70
    finally:
        os._exit(code)


# --------------------------------------------------------------- parent side

def check_name(name):
    if not isinstance(name, str) or not name:
        raise BadJob("file names must be non-empty strings")
    if not FILE_NAME_RE.fullmatch(name) or ".." in name or name.startswith("."):
        raise BadJob(f"refused file name {name!r}: [A-Za-z0-9._-], 1 to 128 bytes, "
                     "no leading dot, no '..'")
    if name in (MAIN_FILE, ARTIFACT_DIR):
        raise BadJob(f"refused file name {name!r}: reserved by the runner")


def decode_files(cfg, files):
    if files is None:
        return {}
    if not isinstance(files, dict):
        raise BadJob("'files' must be an object of name -> base64")
    if len(files) > cfg.max_files:
        raise BadJob(f"too many input files ({len(files)} > {cfg.max_files})")
    out, total = {}, 0
    for name, b64 in files.items():
        check_name(name)
        if not isinstance(b64, str):
            raise BadJob(f"file {name!r}: content must be a base64 string")
        if (len(b64) // 4) * 3 > cfg.max_files_bytes + 3:
            raise BadJob(f"input files larger than {cfg.max_files_bytes} bytes in total")
        try:
            data = base64.b64decode(b64, validate=True)
        except ValueError:
            raise BadJob(f"file {name!r}: content is not valid base64") from None
        total += len(data)
        if total > cfg.max_files_bytes:
            raise BadJob(f"input files larger than {cfg.max_files_bytes} bytes in total")
        out[name] = data
    return out


def int_limit(limits, key, default, high):
    value = limits.get(key, default)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise BadJob(f"limits.{key} must be a positive integer")
    return min(value, high)


def job_nonce(job):
    """The job's nonce if it is well-formed (a bad_job reports it too)."""
    nonce = job.get("nonce") if isinstance(job, dict) else None
    return nonce if isinstance(nonce, str) and NONCE_RE.fullmatch(nonce) else None


def job_script(job):
    """True for "mode": "script" (run main.py as the program, no main() call)."""
    mode = job.get("mode", "main")
    if mode not in ("main", "script"):
        raise BadJob("'mode' must be \"main\" or \"script\"")
    return mode == "script"


def parse_job(cfg, job):
    if not isinstance(job, dict):
        raise BadJob("job must be a JSON object")
    code = job.get("code")
    if not isinstance(code, str):
        raise BadJob("'code' must be a string")
    arguments = job.get("arguments")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise BadJob("'arguments' must be an object")
    limits = job.get("limits") or {}
    if not isinstance(limits, dict):
        raise BadJob("'limits' must be an object")
    if job.get("nonce") is not None and job_nonce(job) is None:
        raise BadJob("'nonce' must be 16-128 characters [A-Za-z0-9]")
    stream = job.get("stream", False)
    if not isinstance(stream, bool):
        raise BadJob("'stream' must be a boolean")
    runtime = job.get("runtime")
    if runtime is not None and not isinstance(runtime, dict):
        raise BadJob("'runtime' must be an object")
    return {
        "script": job_script(job),
        "code": code.encode("utf-8", "surrogatepass"),
        "arguments": arguments,
        "files": decode_files(cfg, job.get("files")),
        "timeout_ms": int_limit(limits, "timeout_ms", DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS),
        "max_output": int_limit(limits, "max_output_bytes", DEFAULT_MAX_OUTPUT, MAX_MAX_OUTPUT),
        "runtime": runtime,
        "stream": stream and job_nonce(job) is not None,
        "nonce": job_nonce(job),
    }


def write_new_file(dirfd, name, data):
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600,
                 dir_fd=dirfd)
    try:
        write_all(fd, data)
    finally:
        os.close(fd)


def prepare_workspace(job):
    try:
        dirfd = os.open(WORKSPACE, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as e:
        raise RunnerError(f"cannot open {WORKSPACE}: {e.strerror}") from None
    try:
        write_new_file(dirfd, MAIN_FILE, job["code"])
        os.mkdir(ARTIFACT_DIR, 0o700, dir_fd=dirfd)
        for name, data in job["files"].items():
            write_new_file(dirfd, name, data)
    except FileExistsError as e:
        raise BadJob(f"file {e.filename!r} given twice") from None
    except OSError as e:
        raise RunnerError(f"cannot write the workspace: {e.strerror}") from None
    finally:
        os.close(dirfd)


def report_ready(ready_r):
    """Once the child has pre-imported (it closes its end of the ready pipe),
    say so on stdout: the executor's pool keeps a pre-importing sandbox out of
    its idle list until this line (which its job reader ignores: no nonce). A
    job that arrives first simply goes ahead."""
    poller = select.poll()  # poll, as the parent's loop: select(2) is not always allowed
    poller.register(0, select.POLLIN)
    poller.register(ready_r, select.POLLIN)
    if ready_r in [fd for fd, _ in poller.poll()]:
        write_all(1, b'{"sandgate_runner_ready":1}\n')
    os.close(ready_r)


def read_job_line(cfg):
    """One line from the container's stdin, at most cfg.max_job bytes."""
    line = sys.stdin.buffer.readline(cfg.max_job + 1)
    if not line:
        return None
    if len(line) > cfg.max_job and not line.endswith(b"\n"):
        raise BadJob(f"job line longer than {cfg.max_job} bytes")
    return line


class Streamer:
    """Sends the program's output as stream frames while it runs. Only what
    Run.take kept (under max_output) is sent, so the frames of a stream never
    add up to more than its share of the result line."""

    def __init__(self, nonce, fds):
        self.nonce = nonce
        self.names = {fds["out_r"]: "stdout", fds["err_r"]: "stderr"}
        self.pending = {fd: bytearray() for fd in self.names}
        self.since = {fd: None for fd in self.names}

    def add(self, fd, data):
        if fd not in self.names or not data:
            return
        if self.since[fd] is None:
            self.since[fd] = time.monotonic()
        self.pending[fd] += data
        if b"\n" in data:
            self.flush(fd, final=False)

    def due_in(self):
        """Seconds until the oldest unsent byte must go (None: nothing waits)."""
        waits = [t + STREAM_FLUSH_S - time.monotonic() for t in self.since.values() if t]
        return max(min(waits), 0.0) if waits else None

    def tick(self):
        now = time.monotonic()
        for fd, t in self.since.items():
            if t is not None and now - t >= STREAM_FLUSH_S:
                self.flush(fd, final=False)

    def flush(self, fd, final):
        buf = self.pending[fd]
        end = len(buf) if final else utf8_boundary(buf)
        pos = 0
        while pos < end:
            piece = buf[pos:min(pos + STREAM_FRAME_MAX, end)]
            if pos + len(piece) < end:
                piece = piece[:utf8_boundary(piece) or len(piece)]
            self.send(self.names[fd], bytes(piece))
            pos += len(piece)
        del buf[:end]
        self.since[fd] = time.monotonic() if buf else None

    def finish(self):
        for fd in self.names:
            self.flush(fd, final=True)

    def send(self, name, data):
        if not data:
            return
        frame = {"sandgate_runner": PROTOCOL_VERSION, "nonce": self.nonce, "stream": name,
                 "text": data.decode("utf-8", "replace")}
        write_all(1, ("\n" + json.dumps(frame, ensure_ascii=False) + "\n").encode("utf-8"))


def utf8_boundary(buf):
    """Length of buf without a UTF-8 sequence cut at its end (sent later)."""
    n = len(buf)
    for back in range(1, min(4, n) + 1):
        b = buf[n - back]
        if b < 0x80:
            return n
        if b >= 0xC0:
            need = 2 if b < 0xE0 else 3 if b < 0xF0 else 4
            return n if back >= need else n - back
    return n


class Run:
    """What the parent sees of one run of the child."""

    def __init__(self, pid, fds, max_output, streamer=None):
        self.streamer = streamer
        self.pid = pid
        self.stuck_ticks = 0
        self.next_stuck_check = 0.0
        self.bufs = {fds["out_r"]: bytearray(), fds["err_r"]: bytearray(),
                     fds["res_r"]: bytearray()}
        self.cap = max_output
        self.out_fd, self.err_fd, self.res_fd = fds["out_r"], fds["err_r"], fds["res_r"]
        # Denials have their own cap and never count as output.
        self.den_fd = fds["den_r"]
        self.bufs[self.den_fd] = bytearray()
        self.limit_hit = None
        self.status = None
        self.rusage = None

    def take(self, fd, chunk):
        buf = self.bufs[fd]
        if fd == self.den_fd:
            buf += chunk[:max(DENIAL_BYTES_MAX - len(buf), 0)]
            return
        room = self.cap - len(buf)
        buf += chunk[:max(room, 0)]
        if self.streamer:
            self.streamer.add(fd, chunk[:max(room, 0)])
        if len(chunk) > room:
            self.limit_hit = {self.out_fd: "stdout", self.err_fd: "stderr",
                              self.res_fd: "result"}[fd]

    def reap(self, flags):
        try:
            pid, status, rusage = os.wait4(self.pid, flags)
        except ChildProcessError:
            # Gone without an exit status: nothing else reaps it (SIGCHLD is
            # not ignored here), so this is runsc losing the kernel filter's
            # kill of the job's PID 1, as reap_stuck. Never read as exit 0.
            if self.status is None:
                self.status = int(signal.SIGSYS)
            return True
        if pid == 0:
            return self.reap_stuck()
        self.status, self.rusage = status, rusage
        return True

    def reap_stuck(self):
        """runsc 20240729 does not always finish the kernel filter's kill
        (SECCOMP_RET_KILL_PROCESS): the process stays a zombie that wait4 is
        never told about, so the job would end as a timeout. Seen as a zombie
        STUCK_CHECKS times in a row, STUCK_CHECK_S apart, it is that kill
        (as the Node runner does: images/nodejs/runner_watch.c): killed
        again, reaped, and reported as SIGSYS. True once reaped."""
        now = time.monotonic()
        if now < self.next_stuck_check:
            return False
        self.next_stuck_check = now + STUCK_CHECK_S
        try:
            with open(f"/proc/{self.pid}/stat", "rb") as f:
                stat = f.read(512)
            state = stat[stat.rindex(b")") + 2:stat.rindex(b")") + 3]
        except (OSError, ValueError):
            state = b""
        self.stuck_ticks = self.stuck_ticks + 1 if state == b"Z" else 0
        if self.stuck_ticks < STUCK_CHECKS:
            return False
        kill_group(self.pid)
        try:
            _, _, self.rusage = os.wait4(self.pid, 0)
        except ChildProcessError:
            pass
        self.status = int(signal.SIGSYS)  # a wait status: killed by SIGSYS
        return True


def drain(run, fds_open):
    for fd in list(fds_open):
        while not run.limit_hit:
            try:
                chunk = os.read(fd, READ_CHUNK)
            except BlockingIOError:
                break
            if not chunk:
                fds_open.discard(fd)
                break
            run.take(fd, chunk)


def supervise(run, deadline):
    """Reads the child's pipes until it has exited and they are closed, the
    deadline passes, or an output cap is hit. Returns None or the outcome that
    stopped it ("timeout" / "output_limit")."""
    poller = select.poll()
    fds_open = set(run.bufs)
    for fd in fds_open:
        os.set_blocking(fd, False)
        poller.register(fd, select.POLLIN)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return "timeout"
        if not fds_open:
            if run.reap(os.WNOHANG):
                return None
            time.sleep(min(left, 0.002))
            continue
        wait = min(left, EXIT_POLL_S)
        due = run.streamer.due_in() if run.streamer else None
        events = poller.poll((wait if due is None else min(wait, due)) * 1000)
        if run.streamer:
            run.streamer.tick()
        for fd, _ in events:
            if fd not in fds_open:
                continue
            try:
                chunk = os.read(fd, READ_CHUNK)
            except BlockingIOError:
                continue
            if not chunk:
                fds_open.discard(fd)
                poller.unregister(fd)
            else:
                run.take(fd, chunk)
            if run.limit_hit:
                return "output_limit"
        if not events and run.reap(os.WNOHANG):
            # The child is done but something it started holds the pipes.
            drain(run, fds_open)
            return "output_limit" if run.limit_hit else None


def kill_group(pid, sig=signal.SIGKILL):
    try:
        os.killpg(pid, sig)
    except OSError:
        pass


def stop_group(pid):
    kill_group(pid, signal.SIGSTOP)


def decode_text(buf):
    return bytes(buf).decode("utf-8", "replace")


class UnreadableReport(Exception):
    """What the child left on the report pipe is not a report: the program
    can write there (it holds the pipe), so this is its own failure."""


def reject_constant(name):
    raise ValueError(f"{name} is not JSON")


def parse_report(data, setup_failed_possible=False):
    """The child's report, validated and bounded: (outcome, message, result)
    with result ready for the result line. Raises UnreadableReport.
    runner_error (the run-time policy could not be installed) is believed only
    while setup_failed_possible: the program holds the report pipe too, and a
    runner_error it wrote would otherwise pass its failure off as the
    sandbox's and hide its denials."""
    try:
        report = json.loads(data, parse_constant=reject_constant)
    except (ValueError, RecursionError) as e:
        raise UnreadableReport(f"not JSON ({type(e).__name__})") from None
    # runner_error: the child could not install the job's run-time policy
    if not isinstance(report, dict) or \
            report.get("outcome") not in ("ok", "exception", "no_main", "runner_error"):
        raise UnreadableReport("not a known outcome")
    if report["outcome"] == "runner_error" and not setup_failed_possible:
        raise UnreadableReport("runner_error written after the program started")
    message = report.get("message")
    if message is not None and not isinstance(message, str):
        raise UnreadableReport("message is not a string")
    if message is not None:
        message = message.encode("utf-8", "replace").decode("utf-8")[:1000]
    result = {"present": False}
    if report["outcome"] == "ok" and report.get("present") is True:
        value = report.get("value")
        try:
            big = value_beyond_int64(value)
            text = json.dumps(value, ensure_ascii=False, allow_nan=False)
            text.encode("utf-8")
        except (ValueError, RecursionError, UnicodeEncodeError) as e:
            raise UnreadableReport(f"bad value ({type(e).__name__}: {e})"[:200]) from None
        result = {"present": True, "value_json": text} if big else {"present": True, "value": value}
    return report["outcome"], message, result


def classify(run, stopped, enforced=False):
    """Outcome fields from how the child ended and what it reported.
    enforced: the job had a run-time policy, whose installation is the only
    place a runner_error report comes from; it happens before the child
    writes STARTED_MARK on the denial pipe."""
    res = {"exit_code": 0, "signal": 0, "result": {"present": False}, "message": None}
    if stopped == "timeout":
        res.update(outcome="timeout", exit_code=EXIT_TIMEOUT, message="timeout_ms exceeded")
        return res
    if stopped == "output_limit":
        res.update(outcome="output_limit", exit_code=EXIT_OUTPUT,
                   message=f"{run.limit_hit} larger than max_output_bytes ({run.cap})")
        return res
    status = run.status or 0
    if os.WIFSIGNALED(status):
        res["signal"] = os.WTERMSIG(status)
        res["exit_code"] = -res["signal"]
    else:
        res["exit_code"] = os.WEXITSTATUS(status)
    unreadable = None
    if run.bufs[run.res_fd]:
        try:
            res["outcome"], res["message"], res["result"] = parse_report(
                bytes(run.bufs[run.res_fd]), enforced and not run.bufs[run.den_fd])
            if res["outcome"] == "runner_error":
                res["exit_code"] = EXIT_RUNNER
            else:
                observed(res)
            return res
        except UnreadableReport as e:
            unreadable = str(e)
    if res["signal"]:
        res.update(outcome="killed", message=f"the program was killed by signal {res['signal']}")
    elif unreadable:
        res.update(outcome="exception", exit_code=res["exit_code"] or 1,
                   message=f"unreadable report from the program: {unreadable}")
    elif res["exit_code"] == 0:
        # No report and exit status 0: the program left through os._exit(0)
        # before main() returned, or runsc 20240729 reported a multi-threaded
        # process the kernel filter killed as a plain exit (seen now and then).
        # Either way main() did not return: never a success.
        res.update(outcome="exception",
                   message="the program ended without returning from main() (os._exit, or "
                           "its process was ended from outside)")
    else:
        res.update(outcome="exception",
                   message=f"the program exited with status {res['exit_code']}")
    return res


def observed(res):
    """The report says what the program returned; how its process ended is
    what wait4 saw: a report of success from a process that was killed or
    exited non-zero does not stand."""
    if res["signal"]:
        res.update(outcome="killed", result={"present": False},
                   message=f"the program was killed by signal {res['signal']}")
    elif res["outcome"] == "ok" and res["exit_code"] != 0:
        res.update(outcome="exception", result={"present": False},
                   message=f"the program exited with status {res['exit_code']}")


def kernel_denial(status, runtime):
    """The kernel filter's kill (SIGSYS, RT_KILL_REFUSALS) seen by wait4, as
    a denial; None for any other end. The filter kills for a new process or,
    offline, a socket: whichever of the two the policy refuses."""
    if status is None or not os.WIFSIGNALED(status) or os.WTERMSIG(status) != signal.SIGSYS:
        return None
    runtime = runtime if isinstance(runtime, dict) else {}
    # the kernel does not say which call it was: the type is what the policy
    # leaves possible (policies/README.md)
    kind, what = (("network", "a socket") if runtime.get("processes") else
                  ("process", "a new process") if runtime.get("network") else
                  ("process_or_network", "a new process or a socket"))
    return {"type": kind, "target": f"{what}: the job's process was killed by the kernel "
                                     "filter (SIGSYS)"}


def parse_denials(buf):
    """The guard's records, one JSON line each. Anything else on the pipe is
    the program writing to it: that only condemns the program, so it counts
    as a denial too (reflection: it reached the runner's own channel)."""
    denials = []
    for line in bytes(buf).split(b"\n"):
        if not line:
            continue
        try:
            d = json.loads(line)
            kind, target = d["type"], d["target"]
            if not isinstance(kind, str) or not isinstance(target, str):
                raise ValueError
        except (ValueError, KeyError, TypeError):
            kind, target = "reflection", "a record on the runner's denial channel was forged"
        denials.append({"type": kind, "target": target[:256]})
        if len(denials) >= DENIALS_MAX:
            break
    return denials


def apply_denials(fields, run, enforced, runtime=None):
    """Any denial ends the job as unauthorized, even when the program caught
    the error and finished; what it printed stays in the result. The kernel
    filter's kill comes first: it is what this process saw itself."""
    if not enforced:
        return
    denials = parse_denials(run.bufs[run.den_fd])
    killed = kernel_denial(run.status, runtime)
    if killed:
        denials = [killed] + denials[:DENIALS_MAX - 1]
    if fields["outcome"] in ("ok", "exception", "no_main", "killed") and \
            run.status is not None and os.WIFEXITED(run.status) and \
            os.WEXITSTATUS(run.status) == EXIT_DENIAL_LOST and not denials:
        denials = [{"type": "reflection", "target": "the runner's denial channel was closed"}]
    if denials and fields["outcome"] not in ("runner_error", "bad_job"):
        fields.update(outcome="unauthorized", denials=denials, result={"present": False},
                      message=f"runtime.{denials[0]['type']}: {denials[0]['target']}")


def read_artifact(cfg, dirfd, name, room):
    """(entry, None) for a regular file of at most min(art_bytes, room)
    bytes, else (None, reason). Never follows links."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dirfd)
    except OSError:
        return None, "not a regular file"
    try:
        st = os.fstat(fd)
        if not (st.st_mode & 0o170000 == 0o100000):
            return None, "not a regular file"
        if st.st_size > cfg.art_bytes or st.st_size > room:
            return None, "too large"
        data = os.read(fd, cfg.art_bytes + 1)
    finally:
        os.close(fd)
    if len(data) > cfg.art_bytes or len(data) > room:
        return None, "too large"
    ext = name.rsplit(".", 1)[-1].lower()
    return {"name": name, "mime_type": MIME_TYPES[ext], "size": len(data),
            "content_b64": base64.b64encode(data).decode("ascii")}, None


def artifact_names(dirfd, skip):
    """Names with a known extension in the directory, in name order."""
    names = sorted(os.listdir(dirfd))
    return [n for n in names if n not in skip and "." in n
            and n.rsplit(".", 1)[-1].lower() in MIME_TYPES]


def collect_artifacts(cfg, inputs=None):
    """Regular files with a known extension directly under artifacts/, then,
    for a job (inputs: its input file names), those it saved at the
    workspace's root (not main.py, not its input files: RAGFlow returns a
    chart saved as plt.savefig("chart.png")), in name order, within the count
    and size caps. Never follows links."""
    found, skipped, total = [], [], 0
    places = [(os.path.join(WORKSPACE, ARTIFACT_DIR), set())]
    if inputs is not None:
        places.append((WORKSPACE, {MAIN_FILE, ARTIFACT_DIR} | set(inputs)))
    for path, skip in places:
        try:
            dirfd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            for name in artifact_names(dirfd, skip):
                if len(found) >= cfg.art_files:
                    skipped.append({"name": name, "reason": "too many artifacts"})
                    continue
                entry, reason = read_artifact(cfg, dirfd, name, cfg.art_total - total)
                if entry is None:
                    skipped.append({"name": name, "reason": reason})
                    continue
                total += entry["size"]
                found.append(entry)
        finally:
            os.close(dirfd)
    return found, skipped


def report(fields, nonce):
    """Writes the result line. The program can reach the container's stdout
    through /proc/1/fd/1 (gVisor ignores PR_SET_DUMPABLE there), so the line
    carries the job's nonce, which only this process has seen, and starts with
    a newline so that a partial line written before it cannot swallow it."""
    line = {"sandgate_runner": PROTOCOL_VERSION, "nonce": nonce, "outcome": "ok", "exit_code": 0, "signal": 0,
            "stdout": "", "stderr": "", "result": {"present": False}, "artifacts": [],
            "memory_used_kb": None, "time_used_ms": 0.0, "message": None}
    line.update(fields)
    data = ("\n" + json.dumps(line, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
    write_all(1, data)


def parent_run_job(cfg, pid, fds, job):
    with JobFiles():
        prepare_workspace(job)
    streamer = Streamer(job["nonce"], fds) if job["stream"] else None
    run = Run(pid, fds, job["max_output"], streamer)
    started = time.monotonic()
    payload = {"arguments": job["arguments"], "runtime": job["runtime"], "stream": job["stream"],
               "script": job["script"]}
    write_all(fds["job_w"], json.dumps(payload).encode("utf-8") + b"\n")
    os.close(fds["job_w"])
    stopped = supervise(run, started + job["timeout_ms"] / 1000.0)
    if stopped is not None or run.status is None:
        kill_group(pid)
        run.reap(0)
    elapsed_ms = (time.monotonic() - started) * 1000.0
    # Anything the program left behind stops now; it is killed once the
    # result line is out (main), so its teardown is not the job's time.
    stop_group(pid)
    if streamer:
        streamer.finish()
    fields = classify(run, stopped, job["runtime"] is not None or SPLIT)
    apply_denials(fields, run, job["runtime"] is not None, job["runtime"])
    fields["stdout"] = decode_text(run.bufs[run.out_fd])
    fields["stderr"] = decode_text(run.bufs[run.err_fd])
    fields["time_used_ms"] = round(elapsed_ms, 3)
    fields["memory_used_kb"] = int(run.rusage.ru_maxrss) if run.rusage else None
    if fields["outcome"] in ("ok", "exception", "no_main", "unauthorized"):
        with JobFiles():
            fields["artifacts"], skipped = collect_artifacts(cfg, job["files"])
        if skipped:
            fields["artifacts_skipped"] = skipped
    return fields


def make_undumpable():
    """The child runs as the same uid, so without this it could ptrace this
    process or read its memory (/proc/1/mem, process_vm_readv) and learn the
    job's nonce. Failing to set it is fatal: better no result than a
    forgeable one."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def read_session_source():
    """session.py's text (~20 KB), read by the child before it enters the
    job's view, where the runner's files are not; None when missing."""
    try:
        with open(SESSION_MODULE, "rb") as f:
            return f.read()
    except OSError:
        return None


def load_session_module(source=None):
    """session.py (session mode), loaded by each side once a job asks for a
    session: its imports (ast, hmac, traceback) cost a one-shot sandbox
    ~20 ms of start-up under gVisor otherwise. The child passes the source
    it read before entering the job's view. None when the image lacks it (a
    session is then refused)."""
    import importlib.util
    try:
        if source is None:
            source = read_session_source()
        if source is None:
            return None
        spec = importlib.util.spec_from_loader("sandgate_session", loader=None,
                                               origin=SESSION_MODULE)
        module = importlib.util.module_from_spec(spec)
        module.__file__ = SESSION_MODULE
        exec(compile(source, SESSION_MODULE, "exec"), module.__dict__)  # noqa: S102 - our file
        return module
    except (OSError, ImportError, SyntaxError):
        return None


def parent_isolation():
    """With the identity split: isolation.py, the PID namespace the child is
    forked into, and the image's extension modules mapped here, so the child
    inherits them (the kernel filter refuses new code once its job runs):
    mapped in the child instead, they cost its exit, on the request's path,
    ~11 ms of address space to tear down (inherited: ~2 ms). Returns
    (module, None) or (None, why not): the child then refuses every job."""
    if not SPLIT:
        return None, None
    import importlib.util
    try:
        spec = importlib.util.spec_from_file_location("sandgate_isolation", ISOLATION_MODULE)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.new_pid_namespace()
        module.map_native(module.read_native_list(), sys.path)
        return module, None
    except (OSError, ImportError) as e:
        return None, f"cannot isolate the job: {e}"


def load_rekey():
    """rekey.py (next to this file), loaded before the fork so the child
    inherits it (its view has no runner files); None when missing."""
    import importlib.util
    try:
        spec = importlib.util.spec_from_file_location("sandgate_rekey", REKEY_MODULE)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    except (OSError, ImportError, SyntaxError):
        return None


class JobFiles:
    """The parent's work in the workspace (input files, artifacts, session
    files) done as the job's uid (effective uid and gid only; back to 0 at
    the end): the files the job gets are its own, and a file the job made
    unreadable to others is unreadable here too (the parent holds no
    CAP_DAC_OVERRIDE). Does nothing without the identity split."""

    def __enter__(self):
        if SPLIT:
            os.setegid(JOB_UID)
            os.seteuid(JOB_UID)
        return self

    def __exit__(self, *exc):
        if SPLIT:
            os.seteuid(0)
            os.setegid(0)
        return False


def main():
    cfg = Config()
    # Both sides load ctypes (make_undumpable here, the guard's seccomp
    # installer in the child): once before the fork instead of twice after
    # it, ~20 ms of every sandbox's start-up under gVisor.
    import ctypes  # noqa: F401
    job_r, job_w = os.pipe()
    with JobFiles():  # the job's own stdout/stderr: /dev/stdout opens for it
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
    res_r, res_w = os.pipe()
    den_r, den_w = os.pipe()
    ready_r, ready_w = os.pipe()
    fds = {"job_r": job_r, "job_w": job_w, "out_r": out_r, "out_w": out_w,
           "err_r": err_r, "err_w": err_w, "res_r": res_r, "res_w": res_w,
           "den_r": den_r, "den_w": den_w, "ready_r": ready_r, "ready_w": ready_w}
    isolation, setup_error = parent_isolation()
    rekey = load_rekey()
    pid = os.fork()
    if pid == 0:
        child_main(cfg, fds, isolation, setup_error, rekey)
    make_undumpable()
    for key in ("job_r", "out_w", "err_w", "res_w", "den_w", "ready_w"):  # fds only
        os.close(fds[key])
    nonce = None
    try:
        report_ready(fds["ready_r"])
        line = read_job_line(cfg)
        if line is None:
            sys.stderr.write("runner: stdin closed before a job arrived\n")
            kill_group(pid)
            return 3
        try:
            raw = json.loads(line)
        except ValueError as e:
            raise BadJob(f"job is not valid JSON: {e}") from None
        nonce = job_nonce(raw)
        if isinstance(raw, dict) and raw.get("session") is True:
            session = load_session_module()
            if session is None:
                raise RunnerError("this image has no session support")
            return session.serve(sys.modules[__name__], cfg, pid, fds, raw)
        fields = parent_run_job(cfg, pid, fds, parse_job(cfg, raw))
    except BadJob as e:
        kill_group(pid)
        fields = {"outcome": "bad_job", "exit_code": EXIT_RUNNER, "message": str(e)}
    except RunnerError as e:
        kill_group(pid)
        fields = {"outcome": "runner_error", "exit_code": EXIT_RUNNER, "message": str(e)}
    report(fields, nonce)
    kill_group(pid)
    return 0


def exit_now(code):
    """Ends the runner without the interpreter's finalization: once the
    result line is out (written straight to fd 1) nothing is left to save,
    and the sandbox is thrown away. Finalization frees every object, which
    touches the whole heap: under gVisor that cost a pool sandbox ~70-90 ms
    of CPU at its exit, more than the hello-world job itself, and more
    again in a restored sandbox, whose pages fault back in one by one
    (docs/executor.md, "What a sandbox costs")."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(0 if code is None else code if isinstance(code, int) else 1)


if __name__ == "__main__":
    exit_now(main())
