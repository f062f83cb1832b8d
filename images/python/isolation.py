"""sandgate job isolation: the job's own identity and file system view.

Used by runner.py when the image is labelled org.sandgate.identity=split and
the runner starts as uid 0 with only SETUID, SETGID, SETPCAP, SYS_ADMIN and
KILL (executors/sandbox.h). Before the job exists (off the request's path):

  parent (uid 0, PID 1 of the container)   unshare(CLONE_NEWPID), maps the
                                            image's extension modules
                                            (map_native, below), then fork:
                                            the child is PID 1 of its own
                                            PID namespace, sees no other process
  child (still uid 0)                       unshare(CLONE_NEWNS); a new root on
                                            tmpfs holding read-only binds of
                                            /usr and a few /etc entries, /dev,
                                            a fresh /proc (its own namespace),
                                            /tmp and /workspace; pivot_root
                                            into it, the old root detached
                                            (enter_view)
                                            no supplementary groups, gid and uid
                                            65534 (real, effective, saved), an
                                            empty capability bounding set,
                                            NO_NEW_PRIVS (drop_identity)

What the job then cannot reach is decided by the kernel, not by the audit
hook: the runner's files (/opt/sandgate is not in the view, and is root's
0700 anyway), the runner's /proc entries (its environ and cmdline, which
gVisor shows to any uid: another PID namespace has no name for it), /etc
beyond VIEW_ETC, /root, /var, /home, /srv, /opt. Writable are /tmp and
/workspace only (the binds of the container's tmpfs mounts).

Measured under runsc 20240729 (systrap): every call above works for root with
SYS_ADMIN inside the sandbox; `noexec` on the writable binds is accepted but
NOT enforced for mmap(PROT_EXEC) (a copied .so loads), so it is not a control
here (README, "Security model").

No new native code (map_native, then the kernel filter's SG_RT_NO_NEW_CODE,
images/runtime/rt_filter.h). Before the fork (warm pool, off the request's
path) the runner maps every extension module the image holds -- the
standard library's lib-dynload and every installed package's (NATIVE_LIST,
written at image build by list_runtime.py; walked here when absent) -- with
dlopen(RTLD_LAZY | RTLD_LOCAL): that maps each object and the shared
libraries it needs (OpenBLAS, libssl, libstdc++, ...) and runs their ELF
constructors, but not PyInit_*: nothing is imported. Also what glibc loads
lazily (GLIBC_LAZY: libgcc_s, which pthread_exit unwinds with; NSS "files"
and "dns" are in libc.so itself since glibc 2.34). The child inherits the
mappings and the loader's list of them. When the job arrives the runner
installs the filter, which refuses mmap with PROT_EXEC (file-backed and
anonymous: CPython has no JIT), mprotect/pkey_mprotect adding PROT_EXEC,
shmat(SHM_EXEC), remap_file_pages and READ_IMPLIES_EXEC, with EPERM. A later
`import numpy` dlopens a file the loader has mapped already (same name, or
the same device and inode through the view's bind of /usr): it maps nothing
and succeeds. Anything else -- ctypes.CDLL of a file in /tmp or the
workspace, of an image library no extension module needs, of an OpenSSL
engine, sqlite3's load_extension; shellcode in an anonymous executable
mapping; libffi closures (ctypes callbacks, whose trampolines need one) --
fails ("failed to map segment from shared object", PermissionError,
MemoryError).
gVisor makes an executable file mapping resident in full; the new objects'
text is dropped again (_release_text) and faults back from its file when
called, which maps nothing.
Measured (runsc 20240729, the stock image, 144 extension modules, the
machine loaded): ~0.25 s to map them and ~20 ms more for the fork, both
before the job; RSS ~15 -> ~33 MB (~90 MB with the text resident). Mapped
in the child instead, the child's exit (on the request's path: the parent
waits for it) took ~11 ms more to tear the address space down; inherited,
~2 ms.
"""
import ctypes
import errno
import os

CLONE_NEWNS = 0x00020000
CLONE_NEWPID = 0x20000000
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
MNT_DETACH = 0x2
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
SYS_PIVOT_ROOT = 155
CAP_LAST = 63  # beyond the last capability: PR_CAPBSET_DROP fails with EINVAL
JOB_UID = 65534
JOB_GID = 65534
# The view is built on a tmpfs mounted here (an empty directory the image
# makes under the runner's own 0700 directory).
VIEW_ROOT = "/opt/sandgate/view"
OLD_ROOT = ".old"
# Read-only binds of directories the language runtime and the allowed
# packages read (merged /usr: /bin, /lib, /lib64, /sbin are links into it).
VIEW_DIRS = ("/usr",)
VIEW_LINKS = {"/bin": "usr/bin", "/lib": "usr/lib", "/lib64": "usr/lib64", "/sbin": "usr/sbin"}
# /etc entries the runtime needs: the dynamic loader (ld.so.cache, the
# alternatives links numpy's BLAS goes through), names (passwd, group,
# nsswitch, hosts; hostname says what uname says), time zone, TLS roots and
# OpenSSL's configuration, matplotlib's and fontconfig's configuration,
# Debian's Python configuration.
# Not: shadow, gshadow, sub[ug]id, ssl/private, pam, the package database.
VIEW_ETC = (
    "alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone",
    "passwd", "group", "nsswitch.conf", "hosts", "host.conf", "gai.conf", "resolv.conf",
    "hostname", "ssl/certs", "ssl/openssl.cnf", "ca-certificates", "ca-certificates.conf",
    "fonts", "matplotlibrc", "mime.types", "python3", "python3.11", "os-release",
    "debian_version")
# Writable binds: the container's own tmpfs mounts.
VIEW_WRITABLE = ("/tmp", "/workspace")
# The extension modules map_native maps: one absolute path a line, written
# at image build (list_runtime.py) next to this file; read before the view.
NATIVE_LIST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "native_objects.txt")
NATIVE_MAX = 20000  # entries read from the list, and paths walked without it
NATIVE_LIST_BYTES = 4 << 20
# Libraries glibc itself dlopens on demand, which a job's process may need.
GLIBC_LAZY = ("libgcc_s.so.1",)
RTLD_LAZY = 0x1
RTLD_LOCAL = 0x0
MADV_DONTNEED = 4

_libc = ctypes.CDLL(None, use_errno=True)


_libc.dlopen.restype = ctypes.c_void_p
_libc.dlopen.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


class IsolationError(OSError):
    """The job's identity or view could not be made: no job may run."""


def _check(rc, what):
    if rc != 0:
        e = ctypes.get_errno()
        raise IsolationError(e, f"{what}: {os.strerror(e)}")


def _mount(src, dst, fstype, flags, data=None):
    _check(_libc.mount(src.encode() if src else None, dst.encode(),
                       fstype.encode() if fstype else None, ctypes.c_ulong(flags),
                       data.encode() if data else None), f"mount {dst}")


def new_pid_namespace():
    """In the parent, before the fork: its next child is PID 1 of a new PID
    namespace (the parent itself stays where it is)."""
    _check(_libc.unshare(CLONE_NEWPID), "unshare(CLONE_NEWPID)")


def _bind(src, dst, writable):
    _mount(src, dst, None, MS_BIND | MS_REC)
    flags = MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV
    flags |= MS_NOEXEC if writable else MS_RDONLY
    _mount(None, dst, None, flags)


def _bind_target(src, dst):
    """Makes the mount point for src (a directory or a file) at dst."""
    os.makedirs(os.path.dirname(dst), mode=0o755, exist_ok=True)
    if os.path.isdir(src):
        os.makedirs(dst, mode=0o755, exist_ok=True)
    else:
        os.close(os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))


def _populate(root):
    for d in VIEW_DIRS:
        _bind_target(d, root + d)
        _bind(d, root + d, writable=False)
    for link, target in VIEW_LINKS.items():
        if os.path.lexists(link):
            os.symlink(target, root + link)
    for name in VIEW_ETC:
        src = "/etc/" + name
        if not os.path.lexists(src):
            continue
        if os.path.islink(src) and os.readlink(src).startswith("/usr/"):
            os.makedirs(os.path.dirname(root + src), mode=0o755, exist_ok=True)
            os.symlink(os.readlink(src), root + src)  # localtime: resolved in the view
            continue
        if not os.path.exists(src):
            continue
        _bind_target(src, root + src)
        _bind(src, root + src, writable=False)
    for d in VIEW_WRITABLE:
        _bind_target(d, root + d)
        _bind(d, root + d, writable=True)
    _bind_target("/dev", root + "/dev")
    _mount("/dev", root + "/dev", None, MS_BIND | MS_REC)
    os.makedirs(root + "/proc", mode=0o555)
    _mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)


def enter_view():
    """In the child (PID 1 of its namespace, uid 0): its own mount namespace
    and root, as the module's docstring says; the working directory is the
    new root (the workspace may be closed to root: the parent holds no
    CAP_DAC_OVERRIDE). Raises IsolationError."""
    _check(_libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("tmpfs", VIEW_ROOT, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
    _populate(VIEW_ROOT)
    os.mkdir(VIEW_ROOT + "/" + OLD_ROOT, 0o700)
    _check(_libc.syscall(SYS_PIVOT_ROOT, VIEW_ROOT.encode(), (VIEW_ROOT + "/" + OLD_ROOT).encode()),
           "pivot_root")
    os.chdir("/")
    _check(_libc.umount2(("/" + OLD_ROOT).encode(), MNT_DETACH), "umount the old root")
    os.rmdir("/" + OLD_ROOT)
    _mount(None, "/", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


def drop_identity():
    """No supplementary groups, uid/gid JOB_UID/JOB_GID (real, effective,
    saved), an empty bounding set, NO_NEW_PRIVS, dumpable again (its own
    /proc/self); checked afterwards against
    /proc/self/status: every capability set must be empty."""
    _check(_libc.setgroups(0, None), "setgroups")
    _check(_libc.setresgid(JOB_GID, JOB_GID, JOB_GID), "setresgid")
    for cap in range(CAP_LAST + 1):
        if _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != errno.EINVAL:
            _check(-1, f"drop capability {cap} from the bounding set")
    _check(_libc.setresuid(JOB_UID, JOB_UID, JOB_UID), "setresuid")
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "PR_SET_NO_NEW_PRIVS")
    # The uid change left the process undumpable, which under gVisor closes
    # its own /proc/self/fd (and /dev/stdout) to it; nothing else of its uid
    # lives outside its namespace, and the parent is root's.
    _check(_libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), "PR_SET_DUMPABLE")
    if os.getresuid() != (JOB_UID,) * 3 or os.getresgid() != (JOB_GID,) * 3 or os.getgroups():
        raise IsolationError(errno.EPERM, "the job's identity did not change")
    with open("/proc/self/status", "rb") as f:
        for line in f:
            if line[:3] == b"Cap" and int(line.split()[1], 16) != 0:
                raise IsolationError(errno.EPERM, f"capabilities left: {line.decode().strip()}")


def native_objects(path_entries):
    """Every extension module under the import path entries (absolute
    paths, links resolved, each once, sorted), at most NATIVE_MAX."""
    from importlib.machinery import EXTENSION_SUFFIXES
    suffixes = tuple(EXTENSION_SUFFIXES)
    found = set()
    for entry in path_entries:
        if not entry.startswith("/") or not os.path.isdir(entry):
            continue
        for root, _dirs, files in os.walk(entry):
            for name in files:
                if name.endswith(suffixes) and len(found) < NATIVE_MAX:
                    found.add(os.path.realpath(os.path.join(root, name)))
    return sorted(found)


def read_native_list(path=NATIVE_LIST):
    """NATIVE_LIST's paths (absolute, one a line), or None when it cannot be
    read (map_native then walks the import path itself)."""
    try:
        with open(path, "rb") as f:
            text = f.read(NATIVE_LIST_BYTES + 1)
    except OSError:
        return None
    if len(text) > NATIVE_LIST_BYTES:
        return None
    lines = text.decode("utf-8", "replace").splitlines()
    return [line for line in lines if line.startswith("/")][:NATIVE_MAX]


def map_native(listed, path_entries):
    """In the runner, before it forks the job's process: maps the listed
    extension modules (path_entries walked when listed is None) and
    GLIBC_LAZY; the handles are never closed. Returns (mapped, failed): an
    object that fails here (a missing dependency) will fail its import too,
    whatever the filter says."""
    paths = listed if listed is not None else native_objects(path_entries)
    before = _text_ranges()
    mapped = failed = 0
    for p in list(paths) + list(GLIBC_LAZY):
        if _libc.dlopen(p.encode(), RTLD_LAZY | RTLD_LOCAL):
            mapped += 1
        else:
            failed += 1
    _release_text(before)
    return mapped, failed


def _text_ranges():
    """(start, end) of every executable file mapping (/proc/self/smaps), with
    whether it holds private copies (text relocations)."""
    out, cur = {}, None
    with open("/proc/self/smaps", encoding="ascii", errors="replace") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and "-" in parts[0] and parts[5].startswith("/"):
                cur = None
                if parts[1] == "r-xp":
                    lo, hi = (int(x, 16) for x in parts[0].split("-"))
                    cur = (lo, hi)
                    out[cur] = False
            elif cur is not None and parts[:1] == ["Anonymous:"] and parts[1] != "0":
                out[cur] = True
    return out


def _release_text(before):
    """gVisor makes an executable file mapping resident in full: 145 objects'
    text is ~63 MB of RSS per sandbox, read through the gofer, copied by
    every fork and freed at every exit. Their pages are the files' own (no
    private copy, checked), so MADV_DONTNEED drops them and the first call
    into an object faults them back from its file: no mmap, nothing the
    filter refuses."""
    for (lo, hi), private in _text_ranges().items():
        if (lo, hi) not in before and not private:
            _libc.madvise(lo, hi - lo, MADV_DONTNEED)
