"""The client libraries (clients/python, clients/typescript) for the suites
that test them: the TypeScript package built into build/clients-ts (npm ci
from its lock file: the npm registry the first time, then only when the lock
changes), and runs of each client's own tests with their counts."""
import hashlib
import os
import re
import shutil
import subprocess
import sys

import sgtest

PY_DIR = os.path.join(sgtest.ROOT, "clients", "python")
TS_DIR = os.path.join(sgtest.ROOT, "clients", "typescript")
TS_BUILD = os.path.join(sgtest.ROOT, "build", "clients-ts")
TS_COPY = ("package.json", "package-lock.json", "tsconfig.json", "tsconfig.esm.json",
           "tsconfig.cjs.json", "README.md", "scripts", "src", "test", "live")


def run(args, cwd, timeout, env=None):
    r = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                       env={**os.environ, **(env or {})})
    return r.returncode, r.stdout + r.stderr


def _sources_digest():
    h = hashlib.sha256()
    for name in TS_COPY:
        top = os.path.join(TS_DIR, name)
        paths = [top] if os.path.isfile(top) else sorted(
            os.path.join(d, f) for d, _, fs in os.walk(top) for f in fs)
        for path in paths:
            with open(path, "rb") as f:
                h.update(os.path.relpath(path, TS_DIR).encode() + b"\0" + f.read() + b"\0")
    return h.hexdigest()


def build_typescript():
    """Copies the package's sources into build/clients-ts, installs its pinned
    dev dependencies once per lock file and builds it (tsc: dist/esm, dist/cjs)
    unless these sources were built there already. Returns the directory."""
    npm = shutil.which("npm")
    assert npm and shutil.which("node"), "node and npm are needed for the TypeScript client"
    digest = _sources_digest()
    built = os.path.join(TS_BUILD, "built.sha256")
    if os.path.exists(built) and os.path.isdir(os.path.join(TS_BUILD, "dist")):
        with open(built) as f:
            if f.read() == digest:
                return TS_BUILD
    os.makedirs(TS_BUILD, exist_ok=True)
    for name in TS_COPY:
        src, dst = os.path.join(TS_DIR, name), os.path.join(TS_BUILD, name)
        if os.path.isdir(dst):
            shutil.rmtree(dst)
        (shutil.copytree if os.path.isdir(src) else shutil.copy)(src, dst)
    shutil.rmtree(os.path.join(TS_BUILD, "dist"), ignore_errors=True)
    sgtest.npm_ci_once(TS_BUILD)
    rc, out = run([npm, "run", "build"], TS_BUILD, 300)
    assert rc == 0, "the TypeScript build failed:\n" + out[-3000:]
    with open(built, "w") as f:
        f.write(digest)
    return TS_BUILD


def python_tests(test_dir, env=None, timeout=300):
    """Runs the unittest files of clients/python/<test_dir>; returns
    (passed, failed, output)."""
    rc, out = run([sys.executable, "-m", "unittest", "discover", "-v", "-s",
                   os.path.join(PY_DIR, test_dir), "-t", os.path.join(PY_DIR, test_dir)],
                  PY_DIR, timeout, env)
    m = re.search(r"^Ran (\d+) tests?", out, re.M)
    ran = int(m.group(1)) if m else 0
    bad = re.search(r"^FAILED \((.*)\)", out, re.M)
    failed = sum(int(n) for n in re.findall(r"\d+", bad.group(1))) if bad else 0
    if rc != 0 and not failed:
        failed = 1
    return ran - failed, failed, out


def node_tests(test_dir, env=None, timeout=300):
    """Runs `node --test <test_dir>/` in the built package; returns (passed, failed, output)."""
    rc, out = run(["node", "--test", "--test-reporter=tap", test_dir + "/"], TS_BUILD, timeout, env)
    passed = re.search(r"^# pass (\d+)", out, re.M)
    failed = re.search(r"^# fail (\d+)", out, re.M)
    p, f = int(passed.group(1)) if passed else 0, int(failed.group(1)) if failed else 1
    if rc != 0 and not f:
        f = 1
    return p, f, out
