"""sandgate run-time guard: the job's run-time policy inside the sandbox.

Loaded by runner.py in the child, before the job arrives; install() runs after
the job arrived and before the user's module is imported. Two layers:

1. seccomp (libsandgate_rt.so, images/runtime/rt_filter.c): unless the policy
   allows processes, execve/execveat/fork/vfork and clone without CLONE_THREAD
   fail with EPERM (threads still start); unless the job has network, socket()
   of every family but AF_UNIX fails. The kernel (gVisor's) enforces it
   whatever the Python code does.
2. A PEP 578 audit hook that sees what CPython does and stops, with a record:
     process      os.system, os.exec*, os.spawn*, os.posix_spawn, os.fork,
                  subprocess.Popen, pty.spawn, os.kill/killpg
     network      socket creation (not AF_UNIX), name lookups, connect/bind/send
                  on non-AF_UNIX sockets, when the job is offline
     native_code  every ctypes event (but loading the interpreter itself, which
                  `import ctypes` does), sqlite3's extension loading
     unpickle     pickle.find_class (any unpickling that names a global);
                  marshal.load(s) called by the job's own code
     file         with files = "sandbox": writes outside the workspace and /tmp,
                  reads outside those and the policy's read_paths (after
                  resolving links)
     reflection   from the job's own code: sys._getframe and friends, audited
                  attributes of functions/frames/code/generators/tracebacks,
                  exec/compile, code/function construction, gc walks,
                  settrace/setprofile; adding audit hooks (anyone)
     import       the job's own code importing a module outside the policy's
                  import list (import statements, __import__, computed names),
                  including modules already loaded (builtins.__import__ is
                  wrapped: CPython raises no event for those)
   "The job's own code" is every frame whose code object was not compiled
   from a library file (the interpreter's path entries as they are before
   the job, the runner's directory, frozen modules): the workspace, /tmp, and
   code compiled from a string ("<string>"), whoever compiled it, since a
   library's eval of a string the job handed over runs the job's code.
   Libraries (dataclasses, typing, enum, collections, pandas, numpy,
   matplotlib) use exec/compile/_getframe in their own frames and keep
   working; a library may compile a library file name only with that file's
   bytes. gc walks, other threads' frames and trace/profile functions are
   stopped whoever asks. The hook's state comes as default arguments it
   deletes before raising, and no job code runs inside it (targets are
   formatted from exact built-in types only). Every denial is written at once
   to the denial pipe, which only the runner's parent reads: a program that
   catches the exception and carries on is reported all the same. A denial raised while an allowed
   library's module body runs (import time: platform's `uname -p`,
   matplotlib's `fc-list`, both probes they catch) is enforced but not
   reported: the job did not ask for it.

What it does not stop: anything that does not reach an audited event
(CPython audits actions, not attribute reads like `__globals__`); a program
that corrupts the interpreter's memory could remove the hook, which is why
seccomp and gVisor stand behind it.
"""
import _socket
import builtins
import os
import pathlib
import posix
import sys
from _stat import S_ISLNK
from _thread import get_ident

# Private builtins for every function below: a function resolves builtins
# (any, len, str, PermissionError, ...) through its module's __builtins__ at
# call time, and the shared builtins module is the job's to change
# (`__builtins__["any"] = lambda it: True` made every path "under" a root).
# Functions take the mapping when they are created, i.e. after this line.
globals()["__builtins__"] = dict(builtins.__dict__)

# What the guard itself calls once installed, taken now from C modules: the
# program can replace attributes of `os`, `json` or `os.path` (modules reach
# it as attributes of allowed packages) but not these references.
_lstat = posix.lstat
_readlink = posix.readlink
_getcwd = posix.getcwd
_write = posix.write
_fstat = posix.fstat
_open = posix.open
_read = posix.read
_close = posix.close
_exit = posix._exit
_fsdecode = os.fsdecode
_PATH_STR = pathlib.PurePath.__str__
_PATH_FSPATH = pathlib.PurePath.__fspath__
_PURE_PATH = pathlib.PurePath
# type.__name__ read through the C getter: a metaclass cannot override it.
TYPE_NAME = type.__dict__["__name__"].__get__
MAX_LINKS = 40
# The file name of frozen modules' code: library code (importlib itself).
FROZEN = "<frozen "

RT_ALLOW_PROCESSES = 0x1
RT_ALLOW_NETWORK = 0x2
AF_UNIX = 1
TARGET_MAX = 200
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
# Exit status when a denial cannot be recorded (the pipe is gone): better no
# result than an unreported denial.
EXIT_DENIAL_LOST = 86
DIR_CACHE_MAX = 4096

PROCESS_EVENTS = frozenset((
    "os.system", "os.exec", "os.spawn", "os.posix_spawn", "os.fork", "os.forkpty",
    "subprocess.Popen", "pty.spawn", "os.kill", "os.killpg", "signal.pthread_kill",
    "os.startfile"))
LOOKUP_EVENTS = frozenset((
    "socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex",
    "socket.gethostbyaddr", "socket.getnameinfo", "socket.getservbyname",
    "socket.getservbyport"))
SOCKET_USE_EVENTS = frozenset(("socket.connect", "socket.bind", "socket.sendto",
                               "socket.sendmsg"))
REFLECTION_EVENTS = frozenset((
    "sys._getframe", "object.__getattr__", "object.__setattr__", "object.__delattr__",
    "exec", "function.__new__", "builtins.breakpoint"))
# Reflection that reaches objects no caller handed over (every live object,
# every thread's frames, a trace function that sees the hook's own frame):
# stopped whoever asks, library or job. Data libraries do not use them; the
# job could otherwise have an allowed library run them on its behalf.
GLOBAL_REFLECTION_EVENTS = frozenset((
    "gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys._current_frames",
    "sys._current_exceptions", "sys.settrace", "sys.setprofile", "threading.settrace",
    "threading.setprofile"))
NATIVE_EVENTS = frozenset((
    "ctypes.dlopen", "ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.cdata", "ctypes.cdata/buffer",
    "ctypes.call_function", "ctypes.addressof", "ctypes.string_at", "ctypes.wstring_at",
    "ctypes.create_string_buffer", "ctypes.create_unicode_buffer", "ctypes.get_errno",
    "ctypes.set_errno", "ctypes.get_last_error", "ctypes.set_last_error",
    "ctypes.seh_exception", "ctypes.PyObj_FromPtr", "ctypes.set_exception",
    # sqlite3 loads a shared object of the caller's choosing
    "sqlite3.enable_load_extension", "sqlite3.load_extension"))
# Events that matter only when the job's own code raised them.
USER_ONLY_EVENTS = REFLECTION_EVENTS
# Where the import system turns a cached module's bytes into code: the one
# place a library may unmarshal code (on_marshal).
BYTECODE_FRAME = ("<frozen importlib._bootstrap_external>", "_compile_bytecode")
PYC_HEADER = 16
# The C-level attribute: a subclass cannot run code when the hook reads it.
SOCKET_FAMILY = _socket.socket.family
# (event, index of the path argument, writes?)
FILE_EVENTS = {
    "os.listdir": ((0, False),), "os.scandir": ((0, False),), "os.walk": ((0, False),),
    "os.remove": ((0, True),), "os.rmdir": ((0, True),), "os.mkdir": ((0, True),),
    "os.rename": ((0, True), (1, True)), "os.link": ((0, True), (1, True)),
"os.chmod": ((0, True),), "os.chown": ((0, True),),
    "os.utime": ((0, True),), "os.truncate": ((0, True),), "os.chflags": ((0, True),),
    "os.setxattr": ((0, True),), "os.removexattr": ((0, True),),
    "os.listxattr": ((0, False),), "os.getxattr": ((0, False),),
    "shutil.rmtree": ((0, True),), "shutil.copyfile": ((0, False), (1, True)),
}


def library_prefixes(runner_dir, writable):
    """Where library code lives: the interpreter's path entries as they are
    before the job (the runner puts the workspace on the path only after
    install), minus anything under the job's writable roots, the runner's
    directory, and frozen modules. Code compiled from a
    string ("<string>", a name the job chose) or from a file the job wrote is
    the job's, whoever compiled it: a library's eval of a string the job
    handed over (typing's forward references, ...) runs the job's code."""
    out = [runner_dir.rstrip("/") + "/"]
    for entry in sys.path:
        if not entry.startswith("/") or under(entry, writable):
            continue
        out.append(entry.rstrip("/") + "/")
    return tuple(out) + (FROZEN,)


def safe_text(value, depth=0):
    """A denial's target without running any of the job's code: only exact
    built-in types are formatted (a subclass's __repr__ or __format__ would
    run inside the hook, where its frame could reach the guard)."""
    t = type(value)
    if t is str or t is bytes or t is int or t is float or t is bool or value is None:
        return repr(value)
    if (t is tuple or t is list) and depth < 2:
        inner = ", ".join(safe_text(v, depth + 1) for v in value[:8])
        return ("(%s)" if t is tuple else "[%s]") % inner
    return "<" + TYPE_NAME(t) + ">"


def pipe_id(fd):
    st = _fstat(fd)
    return (st.st_dev, st.st_ino)


def write_denial(fd, kind, target, ident=None):
    """One line to the runner's parent, in one write (under PIPE_BUF, so
    threads do not interleave). A denial that cannot be recorded (the fd was
    closed, or another file put in its place: ident is the pipe's) ends the
    process: better no result than an unreported denial."""
    line = '{"type":' + json_str(kind) + ',"target":' + json_str(target) + '}\n'
    try:
        if ident is not None and pipe_id(fd) != ident:
            raise OSError("the denial pipe was replaced")
        _write(fd, line.encode("ascii"))
    except OSError:
        _exit(EXIT_DENIAL_LOST)


def runtime_flags(rt):
    return ((RT_ALLOW_PROCESSES if rt.get("processes") else 0)
            | (RT_ALLOW_NETWORK if rt.get("network") else 0))


def load_seccomp(library):
    """The filter's installer from libsandgate_rt.so. Loaded before the job:
    importing ctypes alone takes ~20 ms under runsc."""
    import ctypes
    lib = ctypes.CDLL(library)
    lib.sg_rt_install.argtypes = [ctypes.c_uint]
    lib.sg_rt_install.restype = ctypes.c_int
    return lib.sg_rt_install


def install_seccomp(rt, installer, extra=0):
    """The kernel layer, from the one C builder (rt_filter.c); extra: more
    of its flags (RT_KILL_REFUSALS when the runner reports the kill)."""
    r = installer(runtime_flags(rt) | extra)
    if r != 0:
        raise OSError(-r, f"cannot install the run-time seccomp filter: {os.strerror(-r)}")


def module_allowed(imports, name):
    """The static import list, read as the analyzer reads it: an entry covers
    itself and its submodules; a parent package of an allowed entry may load
    (importing urllib.parse runs urllib/__init__)."""
    if imports is None:
        return True
    mods = imports["modules"]
    hit = any(name == m or name.startswith(m + ".") for m in mods)
    if imports["mode"] == "deny":
        return not hit
    return hit or any(m.startswith(name + ".") for m in mods)


def json_str(text):
    """A JSON string literal in ASCII, without the json module."""
    out = ['"']
    for ch in text:
        o = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0x20 <= o < 0x7f:
            out.append(ch)
        elif o < 0x10000:
            out.append("\\u%04x" % o)
        else:
            o -= 0x10000
            out.append("\\u%04x\\u%04x" % (0xD800 + (o >> 10), 0xDC00 + (o & 0x3FF)))
    out.append('"')
    return "".join(out)


def real_path(path):
    """realpath on the C-level lstat/readlink: symlinks resolved, "..", "."
    and repeated slashes folded; a component that does not exist is kept as
    written (what follows it cannot be a link)."""
    if not path.startswith("/"):
        path = _getcwd() + "/" + path
    pending = [c for c in reversed(path.split("/")) if c not in ("", ".")]
    out, links = [], 0
    while pending:
        c = pending.pop()
        if c == "..":
            if out:
                out.pop()
            continue
        cand = "/" + "/".join(out + [c])
        try:
            mode = _lstat(cand).st_mode
        except (OSError, ValueError):
            out.append(c)
            continue
        if not S_ISLNK(mode):
            out.append(c)
            continue
        links += 1
        if links > MAX_LINKS:
            raise ValueError("too many levels of symbolic links")
        target = _readlink(cand)
        if target.startswith("/"):
            out = []
        pending.extend(c2 for c2 in reversed(target.split("/")) if c2 not in ("", "."))
    return "/" + "/".join(out)


def read_upto(path, limit):
    """The first bytes of the file at path, past limit when it is longer
    (enough to tell it from a shorter text); None when it cannot be read."""
    try:
        fd = _open(path, os.O_RDONLY | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        chunks, total = [], 0
        while total <= limit:
            chunk = _read(fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    finally:
        _close(fd)
    return b"".join(chunks)


def same_content(path, source):
    """Whether the library file at path holds exactly source (read-only root:
    it cannot change between this check and the compile)."""
    if type(source) is str:
        source = source.encode("utf-8", "surrogateescape")
    return read_upto(path, len(source)) == source


def exists(path):
    try:
        _lstat(path)
        return True
    except (OSError, ValueError):
        return False


def under(path, roots):
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


class Guard:
    """The audit hook and the import wrapper for one job."""

    def __init__(self, rt, den_fd, workspace):
        self.rt = rt
        self.den_fd = den_fd
        self.den_id = pipe_id(den_fd)
        self.user_prefix = workspace.rstrip("/") + "/"
        self.imports = rt.get("imports")
        self.sandbox_files = rt.get("files", "sandbox") == "sandbox"
        self.write_roots = (workspace, "/tmp", "/dev/null")
        # The runner's own directory: its code is public, and tracebacks read it.
        self.runner_dir = os.path.dirname(os.path.abspath(__file__))
        self.read_roots = (workspace, "/tmp", self.runner_dir) + tuple(rt.get("read_paths") or ())
        self.lib_prefixes = library_prefixes(self.runner_dir, self.write_roots)
        self.busy = set()
        self.dir_cache = {}  # realpath of directories outside the writable roots
        self.real_import = builtins.__import__
        self.handlers = self._handlers()

    # ------------------------------------------------------------ plumbing

    def record(self, kind, target, frame=None):
        """Writes the denial to the parent at once (one write, under PIPE_BUF,
        so threads do not interleave) and returns the exception to raise.
        With frame, a denial during an allowed library's import is quiet."""
        target = str(target)[:TARGET_MAX]
        if frame is None or not self.import_time(frame):
            write_denial(self.den_fd, kind, target, self.den_id)
        # Built here, returned (not raised) by the handlers: the hook raises
        # it after dropping its own state, so the traceback the job catches
        # holds no frame of the guard with anything of the guard in it.
        rule = f"runtime.{kind}"
        if kind == "import":
            return ModuleNotFoundError(f"sandgate: {rule}: import of {target!r} is not allowed "
                                       f"by the policy")
        return PermissionError(f"sandgate: {rule}: {target} is not allowed by the policy")

    def guarded(self, fn, *args):
        """Runs one of the frame readers below with this thread's events
        ignored: reading a frame's code raises an audit event of its own. No
        code of the job runs in them (frames and code objects only)."""
        me = get_ident()
        if me in self.busy:
            return fn(*args)
        self.busy.add(me)
        try:
            return fn(*args)
        finally:
            self.busy.discard(me)

    def is_user(self, frame):
        return self.guarded(self._is_user, frame)

    def _is_user(self, frame):
        return frame is not None and not frame.f_code.co_filename.startswith(self.lib_prefixes)

    def import_time(self, frame):
        return self.guarded(self._import_time, frame)

    def _import_time(self, frame):
        """True while an allowed library's module body runs on behalf of the
        job: a library's `<module>` frame comes before (above) any frame of
        the job's own code. The runner's own frames end the walk."""
        while frame is not None:
            name = frame.f_code.co_filename
            if not name.startswith(self.lib_prefixes) or name.startswith(self.runner_dir + "/"):
                return False
            if frame.f_code.co_name == "<module>" and not name.startswith("<"):
                return True
            frame = frame.f_back
        return False

    def importer(self, frame):
        return self.guarded(self._importer, frame)

    def _importer(self, frame):
        """The frame that asked for an import: the first outside importlib."""
        while frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
            frame = frame.f_back
        return frame

    # ------------------------------------------------------------- handlers

    def _handlers(self):
        h = {}
        rt = self.rt
        if not rt.get("processes"):
            for e in PROCESS_EVENTS:
                h[e] = self.on_process
        if not rt.get("network"):
            for e in LOOKUP_EVENTS:
                h[e] = self.on_lookup
            for e in SOCKET_USE_EVENTS:
                h[e] = self.on_socket_use
            h["socket.__new__"] = self.on_socket_new
        if not rt.get("native_code"):
            for e in NATIVE_EVENTS:
                h[e] = self.on_native
            h["ctypes.dlopen"] = self.on_dlopen
        if not rt.get("unpickle"):
            h["pickle.find_class"] = self.on_unpickle
        if not rt.get("unpickle") or not rt.get("reflection"):
            h["marshal.loads"] = h["marshal.load"] = self.on_marshal
        if not rt.get("reflection"):
            for e in REFLECTION_EVENTS:
                h[e] = self.on_reflection
            for e in GLOBAL_REFLECTION_EVENTS:
                h[e] = self.on_global_reflection
            h["compile"] = self.on_compile
            h["code.__new__"] = self.on_code_new
        h["sys.addaudithook"] = self.on_addaudithook
        if self.sandbox_files:
            h["open"] = self.on_open
            for e in FILE_EVENTS:
                h[e] = self.on_file_event
            h["os.symlink"] = self.on_symlink
        if self.imports is not None:
            h["import"] = self.on_import_event
        return h

    def on_process(self, event, args, frame):
        what = args[1] if event == "subprocess.Popen" and len(args) > 1 else args[:1]
        return self.record("process", f"{event} {safe_text(what)}", frame)

    def on_lookup(self, event, args, frame):
        return self.record("network", f"{event} {safe_text(args[:1])}", frame)

    def on_socket_new(self, event, args, frame):
        family = args[1] if len(args) > 1 else -1
        if family != AF_UNIX:
            return self.record("network", f"socket(family={safe_text(family)})", frame)
        return None

    def on_socket_use(self, event, args, frame):
        try:
            family = SOCKET_FAMILY.__get__(args[0])
        except (TypeError, IndexError):
            family = None
        if family != AF_UNIX:
            return self.record("network", f"{event} {safe_text(args[1:2])}", frame)
        return None

    def on_dlopen(self, event, args, frame):
        if args and args[0] is None:  # the interpreter itself: `import ctypes` does this
            return None
        return self.record("native_code", f"{event} {safe_text(args[:1])}", frame)

    def on_native(self, event, args, frame):
        return self.record("native_code", event, frame)

    def on_unpickle(self, event, args, frame):
        return self.record("unpickle", f"pickle.find_class {safe_text(args[0])[1:-1]}."
                           f"{safe_text(args[1])[1:-1]}" if len(args) > 1 else event)

    def on_marshal(self, event, args, frame):
        """The job's own unmarshalling is unpickle (or reflection: it makes
        code). A library's is allowed only where the import system loads a
        cached module, with that .pyc file's own bytes: unmarshalled on the
        job's behalf (importlib's _compile_bytecode called with the job's
        bytes), code could carry a library file's name and pass for library
        code."""
        if self.is_user(frame):
            if not self.rt.get("unpickle"):
                return self.record("unpickle", event)
            return self.record("reflection", event) if not self.rt.get("reflection") else None
        if self.rt.get("reflection") or \
                self.guarded(self._genuine_bytecode, frame, args[0] if args else None):
            return None
        return self.record("reflection", f"{event} of code not read from a library file", frame)

    def _genuine_bytecode(self, frame, data):
        code = frame.f_code
        if (code.co_filename, code.co_name) != BYTECODE_FRAME or type(data) is not bytes:
            return False
        path = frame.f_locals.get("bytecode_path")
        if type(path) is not str or not path.startswith(self.lib_prefixes) or \
                path.startswith("<"):
            return False
        pyc = read_upto(path, len(data) + PYC_HEADER)
        return pyc is not None and pyc[PYC_HEADER:] == data

    def on_code_new(self, event, args, frame):
        """Building a code object (CodeType(), code.replace()): the job's is
        reflection. A library's may name a library file only while a
        library's module body runs (types.coroutine rebuilding the module's
        own functions as it imports); called on the job's behalf later, the
        code would pass for library code with the job's bytecode in it
        (compile and marshal hold the same line)."""
        if self.is_user(frame):
            return self.record("reflection", event)
        name = args[1] if len(args) > 1 else None
        if type(name) is str and name.startswith(self.lib_prefixes) and \
                (not name.startswith("<") or name.startswith(FROZEN)) and \
                not self.import_time(frame):
            return self.record("reflection", f"code object named {safe_text(name)[1:-1]} "
                               "made by a library")
        return None

    def on_reflection(self, event, args, frame):
        if self.is_user(frame):
            what = f"{TYPE_NAME(type(args[0]))}.{safe_text(args[1])[1:-1]}" \
                if event.startswith("object.") and len(args) > 1 else event
            return self.record("reflection", what)
        return None

    def on_global_reflection(self, event, args, frame):
        return self.record("reflection", event, frame)

    def on_compile(self, event, args, frame):
        """The job's compile is reflection. A library's compile may name a
        library file only with that file's own bytes (importlib compiling a
        module without a cached .pyc): otherwise the job's source would run
        under a library's name (codeop, a loader's source_to_code), where
        the hook takes it for library code."""
        if self.is_user(frame):
            return self.record("reflection", event)
        name = args[1] if len(args) > 1 else None
        if type(name) is bytes:
            name = _fsdecode(name)
        if type(name) is str and name.startswith(FROZEN):
            # frozen modules are compiled when the interpreter is built,
            # never at run time: such a name would pass for library code
            return self.record("reflection", f"compile under the name {safe_text(name)[1:-1]}")
        if type(name) is not str or not name.startswith(self.lib_prefixes) or \
                name.startswith("<"):
            return None
        if type(args[0]) is not bytes and type(args[0]) is not str or \
                not self.guarded(same_content, name, args[0]):
            return self.record("reflection", f"compile under the name {name}")
        return None

    def on_addaudithook(self, event, args, frame):
        return self.record("reflection", event)

    def check_path(self, path, write, frame):
        if type(path) is int or path is None:
            return None
        # Only strings, bytes and pathlib's own paths: another path-like object
        # could name one file when checked and another when opened.
        # pathlib's own, unpatched: its string is computed once and cached.
        if issubclass(type(path), _PURE_PATH) and type(path).__str__ is _PATH_STR and \
                type(path).__fspath__ is _PATH_FSPATH:
            path = _PATH_STR(path)
        if type(path) is not str and type(path) is not bytes:
            return self.record("file", f"path given as {TYPE_NAME(type(path))}", frame)
        try:
            real = self.resolve(_fsdecode(path))
        except (TypeError, ValueError) as e:
            return self.record("file", f"unresolvable path ({e})", frame)
        if under(real, self.write_roots if write else self.read_roots):
            return None
        # A read of nothing reveals nothing (libraries probe lists of
        # directories, matplotlib's font search); the program learns only
        # what its open() would tell it anyway.
        if not write and not exists(real):
            return None
        return self.record("file", f"{'write' if write else 'read'} {real}", frame)

    def resolve(self, path):
        """real_path, with the directories of the read-only root (outside
        the workspace and /tmp, where nothing can change a link) cached:
        importing pandas opens a thousand files in a few dozen."""
        full = real_path(path) if "/." in path or not path.startswith("/") else path
        head, _, tail = full.rpartition("/")
        if under(full, self.write_roots) or not tail:
            return real_path(full)
        real_head = self.dir_cache.get(head)
        if real_head is None:
            real_head = real_path(head or "/")
            if not under(real_head, self.write_roots) and len(self.dir_cache) < DIR_CACHE_MAX:
                self.dir_cache[head] = real_head
        if under(real_head, self.write_roots):
            return real_path(full)
        joined = real_head.rstrip("/") + "/" + tail
        try:
            link = S_ISLNK(_lstat(joined).st_mode)
        except (OSError, ValueError):
            link = False
        return real_path(joined) if link else joined

    def on_open(self, event, args, frame):
        path, mode, flags = (tuple(args) + (None, None, None))[:3]
        if isinstance(mode, str):
            write = any(c in mode for c in "wax+")
        else:
            write = bool((flags or 0) & WRITE_FLAGS)
        return self.check_path(path, write, frame)

    def on_file_event(self, event, args, frame):
        for index, write in FILE_EVENTS[event]:
            if index < len(args):
                exc = self.check_path(args[index] if args[index] is not None else ".", write,
                                      frame)
                if exc is not None:
                    return exc
        return None

    def on_symlink(self, event, args, frame):
        """No new links: a link in /tmp or the workspace could be switched
        between the check of an open and the open itself (a thread flipping
        a link between a file of its own and /etc/hostname). Every link the
        checks resolve is then on the read-only root, where none can change."""
        return self.record("file", f"symlink {safe_text(args[1:2])[1:-1]} -> "
                           f"{safe_text(args[:1])[1:-1]}", frame)

    def on_import_event(self, event, args, frame):
        name = args[0] if args else ""
        if type(name) is not str:
            return self.record("import", safe_text(name))
        if self.is_user(self.importer(frame)) and not module_allowed(self.imports, name):
            return self.record("import", name)
        return None

    # ------------------------------------------------------ entry points

    def make_hook(self):
        """The audit hook. It runs for every event CPython raises (thousands
        while pandas imports), so the common case, a library's own
        exec/getattr, returns after one frame read. Its state comes in as
        default arguments, not a closure: a closure's cells can be rewritten
        by anyone holding the function, defaults only with an audited event.
        Before raising a denial it deletes them: the traceback the job
        catches holds this frame, and its locals must give nothing away."""

        def hook(event, args, _get=self.handlers.get, _busy=self.busy,
                 _getframe=sys._getframe, _ident=get_ident, _lib=self.lib_prefixes,
                 _user_only=USER_ONLY_EVENTS, _error=PermissionError):
            handler = _get(event)
            if handler is None:
                return
            me = _ident()
            if me in _busy:  # the guard's own frame reads
                return
            _busy.add(me)
            try:
                frame = _getframe(1)  # the frame whose action raised the event
                user = not frame.f_code.co_filename.startswith(_lib)
            finally:
                _busy.discard(me)
            if not user and event in _user_only:
                return
            failed = False
            try:
                exc = handler(event, args, frame)
            except Exception:  # noqa: BLE001 - fail closed, outside the except
                failed = True
            if failed:
                exc = _error(f"sandgate: the run-time guard could not check {event}")
            if exc is None:
                return
            del _get, _busy, _getframe, _ident, _lib, _user_only, _error, handler, frame, args
            raise exc
        return hook


class ImportGate:
    """builtins.__import__ and importlib.import_module for the job's own
    imports. Lives in a private second copy of this module (install()): the
    program can reach these functions (they are builtins) and through them
    their module's globals, so nothing the audit hook relies on is there."""

    def __init__(self, imports, den_fd, lib_prefixes):
        self.imports = imports
        self.den_fd = den_fd
        self.den_id = pipe_id(den_fd)
        self.lib_prefixes = lib_prefixes
        self.real_import = builtins.__import__

    def _is_user(self, frame):
        return frame is not None and not frame.f_code.co_filename.startswith(self.lib_prefixes)

    def import_wrapper(self, name, globals=None, locals=None, fromlist=(), level=0):
        """The job's own imports of modules already loaded raise no audit
        event, so they are checked here."""
        if level == 0 and self._is_user(sys._getframe(1)):
            self.check_user_import(name, fromlist)
        return self.real_import(name, globals, locals, fromlist, level)

    def wrap_import_module(self, real):
        """importlib.import_module returns loaded modules straight from
        sys.modules (no event, no __import__). Calls from libraries
        (optional dependencies) pass."""
        gate = self

        def import_module(name, package=None):
            if isinstance(name, str) and not name.startswith(".") and \
                    gate._is_user(sys._getframe(1)):
                gate.check_user_import(name, ())
            return real(name, package)
        return import_module

    def check_user_import(self, name, fromlist):
        if not isinstance(name, str) or not module_allowed(self.imports, name):
            self.deny(name)
        for item in fromlist or ():
            # `from urllib import request` loads urllib.request without an
            # event when urllib (a parent of an allowed urllib.parse) is allowed.
            if isinstance(item, str) and item != "*" and \
                    not module_allowed(self.imports, f"{name}.{item}"):
                self.deny(f"{name}.{item}")

    def deny(self, name):
        target = str(name)[:TARGET_MAX]
        write_denial(self.den_fd, "import", target, self.den_id)
        raise ModuleNotFoundError(f"sandgate: runtime.import: import of {target!r} is not "
                                  f"allowed by the policy")


def load_private_copy():
    """A second, private instance of this module for the import gate. Made
    before the job (the runner calls this at start): compiling the module
    again would otherwise cost the job's first milliseconds."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("sandgate_import_gate", __file__)
    private = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(private)
    return private


def install(rt, den_fd, workspace, seccomp, private=None, extra=0):
    """Everything, in order: seccomp, the import wrapper, the audit hook (the
    last: from here on the hook sees all). Returns the Guard. seccomp is
    load_seccomp()'s installer, or None to skip that layer (the host tests of
    the hook's decisions only); private is load_private_copy()'s module (made
    here when not given)."""
    if seccomp is not None:
        install_seccomp(rt, seccomp, extra)
    guard = Guard(rt, den_fd, workspace)
    if guard.imports is not None:
        import importlib
        private = private or load_private_copy()
        gate = private.ImportGate(guard.imports, den_fd, guard.lib_prefixes)
        builtins.__import__ = gate.import_wrapper
        importlib.import_module = gate.wrap_import_module(importlib.import_module)
    sys.addaudithook(guard.make_hook())
    return guard
