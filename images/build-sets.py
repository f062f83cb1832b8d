#!/usr/bin/env python3
"""build-sets.py - build one image per package set declared in flavours/.

usage: images/build-sets.py [--dir DIR] [--wheelhouse DIR] [--tag TAG] [--language L]...
                            [--check] [NAME...]

Each *.json file of the set directory (SANDGATE_FLAVOURS_DIR, default
flavours/) declares one package set (docs/images.md, "Adding packages"): its
name, language, Debian packages, npm packages pinned with their integrity,
Python wheels pinned by sha256 (from the wheelhouse, SANDGATE_WHEELHOUSE,
default DIR/wheelhouse; or a requirements file with hashes), the modules its
warm sandboxes pre-import and its pool size or memory. Every file is checked
first (strictly: unknown keys, bad names, too many entries stop everything);
then, for each set, every wheel and npm tarball is checked against its pin on
the host, and the image sandgate/set-LANGUAGE-NAME:TAG is built on top of
sandgate/sandbox-LANGUAGE:TAG. Nothing is fetched inside the build but
Debian packages from the mirror: pip runs with --no-index --require-hashes on
the staged wheels, npm tarballs are unpacked as staged. A missing, unpinned or
tampered package stops the build naming it. Each image records its manifest
(every package, its version, its source and the modules it provides) at
/opt/sandgate/set.json, which the executor reads at start (--set IMAGE).
An unchanged set is a cache hit (the Docker layer cache).

--check validates the files and the pins, builds nothing. NAME... builds only
those sets (LANGUAGE-NAME or NAME), --language only that language's. After
building every set of a language, WORK/executors-TAG.env (build/sets/) holds
SANDGATE_SETS_PYTHON / SANDGATE_SETS_NODEJS: the images to give its executor
(images/stack.sh passes them to the stack's executors as SANDGATE_SETS).
"""
import argparse
import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

MAX_FILE = 64 * 1024
MAX_SETS = 32
MAX_DEBIAN = 64
MAX_WHEELS = 128
MAX_NPM = 64
MAX_PREIMPORT = 16  # executors/flavour.h FLAVOUR_MODULES_MAX
MAX_POOL_SIZE = 64  # FLAVOUR_SIZE_MAX
MAX_MEMORY_MB = 65536  # PKGSET_MEMORY_MB_MAX
MAX_WHEEL_BYTES = 256 * 1024 * 1024
MAX_MODULES = 64  # per package (PKGSET_MODULES_MAX) and per set (FLAVOUR_PROVIDES_MAX)

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,30}$")
DEBIAN_RE = re.compile(r"^[a-z0-9][a-z0-9+.-]{1,63}(=[A-Za-z0-9.+:~-]{1,64})?$")
MODULE_RE = re.compile(r"^[A-Za-z0-9_.@/-]{1,63}$")
SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
WHEEL_RE = re.compile(r"^([A-Za-z0-9_.]+)-([A-Za-z0-9_.!+]+)(-[0-9][^-]*)?-[^-]+-[^-]+-[^-]+\.whl$")
NPM_RE = re.compile(r"^((@[a-z0-9._-]+/)?[a-z0-9._-]+)@([0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?)$")
INTEGRITY_RE = re.compile(r"^sha512-[A-Za-z0-9+/]{86}==$")
REQ_RE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.!+_-]+)$")
LANGUAGES = ("python", "nodejs")
KEYS = {"name", "language", "description", "debian", "python", "npm", "preimport", "pool"}


class SetError(Exception):
    pass


def say(msg):
    print(f"sets: {msg}", flush=True)


def norm(name):
    return re.sub(r"[-_.]+", "_", name).lower()


def strings(value, where, limit, pattern):
    if not isinstance(value, list) or len(value) > limit:
        raise SetError(f"{where}: a list of at most {limit}")
    for i, v in enumerate(value):
        if not isinstance(v, str) or not pattern.match(v):
            raise SetError(f"{where}[{i}]: {v!r} is not valid")
    if len(set(value)) != len(value):
        raise SetError(f"{where}: listed twice")
    return value


def check_keys(obj, allowed, where):
    if not isinstance(obj, dict):
        raise SetError(f"{where}: expected an object")
    for k in obj:
        if k not in allowed:
            raise SetError(f"{where}.{k}: unknown key" if where else f"{k}: unknown key")


def parse_requirements(path):
    """name==version --hash=sha256:HEX lines (continuations joined); every
    line pinned and hashed, nothing else (no options, no URLs)."""
    out = []
    text = open(path, encoding="utf-8").read(MAX_FILE + 1)
    if len(text) > MAX_FILE:
        raise SetError(f"{path}: larger than {MAX_FILE} bytes")
    for lineno, line in enumerate(text.replace("\\\n", " ").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        req = REQ_RE.match(parts[0].split(";", 1)[0])
        if not req:
            raise SetError(f"{path}:{lineno}: '{parts[0]}' is not pinned as name==version")
        hashes = []
        for p in parts[1:]:
            m = re.match(r"^--hash=sha256:([0-9a-f]{64})$", p)
            if not m:
                raise SetError(f"{path}:{lineno}: '{p}': only --hash=sha256:HEX may follow")
            hashes.append(m.group(1))
        if not hashes:
            raise SetError(f"{path}:{lineno}: {parts[0]} is not pinned by a --hash=sha256")
        out.append((req.group(1), req.group(2), hashes))
    if len(out) > MAX_WHEELS:
        raise SetError(f"{path}: more than {MAX_WHEELS} requirements")
    return out


def parse_python(py, where, set_dir):
    check_keys(py, {"wheels", "requirements"}, where)
    if ("wheels" in py) == ("requirements" in py):
        raise SetError(f"{where}: give either wheels or requirements")
    if "requirements" in py:
        rel = py["requirements"]
        if not isinstance(rel, str) or not re.match(r"^[A-Za-z0-9_.-]{1,128}$", rel):
            raise SetError(f"{where}.requirements: a file name next to the set file")
        return parse_requirements(os.path.join(set_dir, rel))
    wheels = py["wheels"]
    if not isinstance(wheels, list) or not wheels or len(wheels) > MAX_WHEELS:
        raise SetError(f"{where}.wheels: a list of 1..{MAX_WHEELS}")
    out = []
    for i, w in enumerate(wheels):
        check_keys(w, {"file", "sha256"}, f"{where}.wheels[{i}]")
        f, h = w.get("file"), w.get("sha256")
        m = WHEEL_RE.match(f) if isinstance(f, str) and len(f) <= 200 else None
        if not m:
            raise SetError(f"{where}.wheels[{i}].file: {f!r} is not a wheel file name")
        if not isinstance(h, str) or not SHA256_RE.match(h):
            raise SetError(f"{where}.wheels[{i}]: {f} is not pinned (sha256: 64 hex digits)")
        out.append((m.group(1), m.group(2), [h]))
    return out


def parse_npm(npm, where):
    if not isinstance(npm, list) or len(npm) > MAX_NPM:
        raise SetError(f"{where}: a list of at most {MAX_NPM}")
    out = []
    for i, e in enumerate(npm):
        check_keys(e, {"package", "integrity"}, f"{where}[{i}]")
        spec, integ = e.get("package"), e.get("integrity")
        if not isinstance(spec, str) or not NPM_RE.match(spec):
            raise SetError(f"{where}[{i}].package: {spec!r} is not name@exact-version")
        if not isinstance(integ, str) or not INTEGRITY_RE.match(integ):
            raise SetError(f"{where}[{i}]: {spec} is not pinned (integrity: sha512-...)")
        out.append((spec, integ))
    return out


def parse_pool(pool, where):
    check_keys(pool, {"size", "memory_mb"}, where)
    for k, top in (("size", MAX_POOL_SIZE), ("memory_mb", MAX_MEMORY_MB)):
        v = pool.get(k)
        if v is not None and (type(v) is not int or not 0 <= v <= top):
            raise SetError(f"{where}.{k}: an integer 0..{top}")
    return pool


def load_set(path):
    """One set file, checked; a dict with the parsed parts."""
    base = os.path.basename(path)
    if os.path.getsize(path) > MAX_FILE:
        raise SetError(f"{base}: larger than {MAX_FILE} bytes")
    try:
        doc = json.loads(open(path, "rb").read(), object_pairs_hook=no_duplicates)
    except (ValueError, SetError) as e:
        raise SetError(f"{base}: not valid JSON ({e})") from None
    try:
        check_keys(doc, KEYS, "")
    except SetError as e:
        raise SetError(f"{base}: {e}") from None
    name, lang = doc.get("name"), doc.get("language")
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise SetError(f"{base}: name: 1..31 characters of [a-z0-9_-]")
    if lang not in LANGUAGES:
        raise SetError(f"{base}: language: one of {', '.join(LANGUAGES)}")
    desc = doc.get("description", "")
    if not isinstance(desc, str) or len(desc.encode()) > 1024 or \
            any(ord(c) < 0x20 or ord(c) == 0x7f for c in desc):
        raise SetError(f"{base}: description: one line of at most 1024 bytes")
    s = {"file": path, "name": name, "language": lang, "description": desc,
         "source": open(path, "rb").read()}
    try:
        s["debian"] = strings(doc.get("debian", []), "debian", MAX_DEBIAN, DEBIAN_RE)
        s["preimport"] = strings(doc.get("preimport", []), "preimport", MAX_PREIMPORT, MODULE_RE)
        s["pool"] = parse_pool(doc.get("pool", {}), "pool")
        if "python" in doc and lang != "python":
            raise SetError("python: only in a python set")
        if "npm" in doc and lang != "nodejs":
            raise SetError("npm: only in a nodejs set")
        s["wheels"] = parse_python(doc["python"], "python", os.path.dirname(path)) \
            if "python" in doc else []
        s["npm"] = parse_npm(doc.get("npm", []), "npm")
    except SetError as e:
        raise SetError(f"{base}: {e}") from None
    return s


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise SetError("a key is given twice")
    return dict(pairs)


def load_all(set_dir):
    if not os.path.isdir(set_dir):
        raise SetError(f"{set_dir}: no such directory")
    files = sorted(f for f in os.listdir(set_dir) if f.endswith(".json") and not f.startswith("."))
    if len(files) > MAX_SETS:
        raise SetError(f"{set_dir}: more than {MAX_SETS} set files")
    sets, seen = [], set()
    for f in files:
        s = load_set(os.path.join(set_dir, f))
        key = (s["language"], s["name"])
        if key in seen:
            raise SetError(f"{f}: a {key[0]} set named '{key[1]}' is declared twice")
        seen.add(key)
        sets.append(s)
    return sets


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def wheel_modules(path):
    """Top-level modules a wheel installs (from its file list)."""
    mods = set()
    with zipfile.ZipFile(path) as z:
        for n in z.namelist():
            top = n.split("/", 1)[0]
            if top.endswith((".dist-info", ".data")) or not top:
                continue
            mod = top[:-3] if top.endswith(".py") and "/" not in n else top
            mod = mod.split(".", 1)[0]
            if mod.isidentifier() and not mod.startswith("_"):
                mods.add(mod)
    return sorted(mods)[:MAX_MODULES]


def find_wheel(wheelhouse, name, version, hashes, setname):
    """The wheelhouse file for name==version whose sha256 is pinned."""
    cands = []
    if os.path.isdir(wheelhouse):
        for f in sorted(os.listdir(wheelhouse)):
            m = WHEEL_RE.match(f)
            if m and norm(m.group(1)) == norm(name) and m.group(2) == version:
                cands.append(os.path.join(wheelhouse, f))
    if not cands:
        raise SetError(f"set {setname}: wheel {name}=={version} is missing from {wheelhouse}")
    for c in cands:
        if os.path.getsize(c) > MAX_WHEEL_BYTES:
            raise SetError(f"set {setname}: {os.path.basename(c)} is larger than "
                           f"{MAX_WHEEL_BYTES} bytes")
        if sha256_file(c) in hashes:
            return c
    got = ", ".join(f"{os.path.basename(c)} sha256:{sha256_file(c)}" for c in cands)
    raise SetError(f"set {setname}: wheel {name}=={version} does not match its pinned sha256 "
                   f"(tampered or replaced?): wheelhouse has {got}, the set pins "
                   f"{', '.join(hashes)}")


def stage_wheels(s, wheelhouse, ctx):
    os.makedirs(os.path.join(ctx, "wheels"))
    reqs, pkgs = [], []
    for name, version, hashes in s["wheels"]:
        path = find_wheel(wheelhouse, name, version, hashes, s["name"])
        base = os.path.basename(path)
        shutil.copyfile(path, os.path.join(ctx, "wheels", base))
        digest = sha256_file(path)
        reqs.append(f"{name}=={version} --hash=sha256:{digest}")
        pkgs.append({"name": name, "version": version, "kind": "wheel",
                     "source": f"{base} sha256:{digest}", "modules": wheel_modules(path)})
    with open(os.path.join(ctx, "wheels", "requirements.txt"), "w") as f:
        f.write("".join(r + "\n" for r in reqs))
    return pkgs


def npm_tarball(spec, wheelhouse, tmp):
    """A local tarball in the wheelhouse (name-version.tgz as npm pack names
    it), else npm pack fetches it (on the host, never in the build)."""
    name, version = spec.rsplit("@", 1)
    local = os.path.join(wheelhouse, f"{name.lstrip('@').replace('/', '-')}-{version}.tgz")
    if os.path.isfile(local):
        return local
    r = subprocess.run(["npm", "pack", "--silent", spec], cwd=tmp, capture_output=True,
                       text=True, timeout=300)
    tgz = [f for f in os.listdir(tmp) if f.endswith(".tgz")]
    if r.returncode != 0 or len(tgz) != 1:
        raise SetError(f"npm pack {spec} failed: {r.stderr.strip()[-400:]}")
    return os.path.join(tmp, tgz[0])


def stage_npm(s, wheelhouse, ctx):
    os.makedirs(os.path.join(ctx, "npm"))
    pkgs, lines = [], []
    for i, (spec, integ) in enumerate(s["npm"]):
        with tempfile.TemporaryDirectory() as tmp:
            tgz = npm_tarball(spec, wheelhouse, tmp)
            raw = open(tgz, "rb").read()
            actual = "sha512-" + base64.b64encode(hashlib.sha512(raw).digest()).decode()
            if actual != integ:
                raise SetError(f"set {s['name']}: npm package {spec} does not match its pinned "
                               f"integrity (tampered or replaced?): got {actual}, the set pins "
                               f"{integ}")
            with tarfile.open(tgz) as t:
                meta = json.load(t.extractfile("package/package.json"))
            name, version = spec.rsplit("@", 1)
            if meta.get("name") != name or meta.get("version") != version:
                raise SetError(f"set {s['name']}: {spec}: the tarball is "
                               f"{meta.get('name')}@{meta.get('version')}")
            deps = sorted(meta.get("dependencies") or {})
            listed = {n.rsplit("@", 1)[0] for n, _ in s["npm"]}
            for d in deps:
                if d not in listed:
                    raise SetError(f"set {s['name']}: {spec} depends on {d}: add a pinned "
                                   f"{d}@<version> with its integrity to npm")
            out = f"{i:03d}.tgz"
            shutil.copyfile(tgz, os.path.join(ctx, "npm", out))
        lines.append(f"{name} {out}\n")
        pkgs.append({"name": name, "version": version, "kind": "npm",
                     "source": f"{os.path.basename(tgz)} {integ}", "modules": [name]})
    with open(os.path.join(ctx, "npm", "packages.txt"), "w") as f:
        f.write("".join(lines))
    return pkgs


DOCKERFILE_WHEELS = """\
# pip only here: the final image gets the installed files, not pip.
FROM $BASE_IMAGE AS wheels
USER root
RUN export DEBIAN_FRONTEND=noninteractive \\
 && apt-get update -qq \\
 && apt-get install -y -qq --no-install-recommends python3-pip >/dev/null \\
 && rm -rf /var/lib/apt/lists/*
COPY wheels/ /wheels/
RUN python3 -m pip install --no-index --find-links /wheels --require-hashes --no-deps \\
      --no-cache-dir --disable-pip-version-check --target /staging -r /wheels/requirements.txt \\
 && rm -rf /staging/bin
"""

DOCKERFILE_MAIN = """\
FROM $BASE_IMAGE
USER root
ARG SANDGATE_SET_DEBIAN=""
RUN if [ -n "$SANDGATE_SET_DEBIAN" ]; then \\
      export DEBIAN_FRONTEND=noninteractive \\
      && apt-get update -qq \\
      && apt-get install -y -qq --no-install-recommends $SANDGATE_SET_DEBIAN \\
      && apt-get clean \\
      && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt /var/log/dpkg.log; \\
    fi
"""

DOCKERFILE_NPM = """\
COPY npm/ /opt/sandgate/set-npm/
RUN mkdir -p /node_modules \\
 && while read -r name tgz; do \\
      rm -rf "/node_modules/$name" && mkdir -p "/node_modules/$name" \\
      && tar -xzf "/opt/sandgate/set-npm/$tgz" -C "/node_modules/$name" \\
           --strip-components=1 --no-same-owner --no-same-permissions || exit 1; \\
    done </opt/sandgate/set-npm/packages.txt \\
 && rm -rf /opt/sandgate/set-npm \\
 && chmod -R a+rX,go-w /node_modules
"""

LISTING = {
    "python": "RUN python3 -I /opt/sandgate/list_runtime.py >/opt/sandgate/runtime.json\n",
    "nodejs": "RUN node /opt/sandgate/list_runtime.js >/opt/sandgate/runtime.json\n",
}


def dockerfile(s):
    text = "ARG BASE_IMAGE\n"
    if s["wheels"]:
        text += DOCKERFILE_WHEELS
    text += DOCKERFILE_MAIN
    if s["wheels"]:
        # where the image's own Python packages are: the policies' read_paths
        # and the run-time checks treat them as the built-in ones
        text += "COPY --from=wheels /staging/ /usr/lib/python3/dist-packages/\n"
    if s["npm"]:
        text += DOCKERFILE_NPM
    if s["wheels"] or s["npm"] or s["debian"]:
        text += LISTING[s["language"]]
    return text + "USER 65534:65534\n"


def docker(args, **kw):
    return subprocess.run(["docker"] + args, text=True, **kw)


DEBIAN_QUERY = r"""
for p in "$@"; do
  v=$(dpkg-query -W -f '${Version}' "$p") || exit 1
  m=$(dpkg -L "$p" | sed -n -e 's|^/usr/lib/python3/dist-packages/\([A-Za-z0-9_]*\)\(\.py\)\{0,1\}$|\1|p' \
        -e 's|^/usr/lib/python3/dist-packages/\([A-Za-z0-9_]*\)/__init__\.py$|\1|p' \
        -e 's|^/usr/share/nodejs/\([A-Za-z0-9_.@-]*\)/package\.json$|\1|p' | sort -u | tr '\n' ' ')
  printf '%s\t%s\t%s\n' "$p" "$v" "$m"
done
"""


def debian_packages(image_id, debs):
    """Version and top-level modules of each Debian package the set added,
    read from the built image (run without network, removed after)."""
    if not debs:
        return []
    names = [d.split("=", 1)[0] for d in debs]
    r = docker(["run", "--rm", "--network", "none", "--user", "0", "--entrypoint", "sh",
                image_id, "-c", DEBIAN_QUERY, "sh"] + names, capture_output=True, timeout=120)
    if r.returncode != 0:
        raise SetError(f"cannot list the Debian packages of the image: {r.stderr.strip()}")
    out = []
    for line in r.stdout.splitlines():
        name, version, mods = (line.split("\t") + ["", ""])[:3]
        out.append({"name": name, "version": version, "kind": "debian",
                    "source": "debian mirror (apt)",
                    "modules": sorted({m for m in mods.split() if not m.startswith("_")})
                    [:MAX_MODULES]})
    return out


def check_modules(s, packages):
    """Every module a valid name, at most MAX_MODULES in the set (what one
    executor flavour holds: executors/flavour.h FLAVOUR_PROVIDES_MAX)."""
    mods = set()
    for p in packages:
        for m in p["modules"]:
            if not MODULE_RE.match(m):
                raise SetError(f"set {s['name']}: {p['name']} provides '{m}', not a module name "
                               f"of at most 63 bytes")
            mods.add(m)
    if len(mods) > MAX_MODULES:
        raise SetError(f"set {s['name']}: its packages provide {len(mods)} modules, more than "
                       f"{MAX_MODULES}: split it into two sets")


def manifest(s, packages):
    check_modules(s, packages)
    doc = {"set": s["name"], "language": s["language"], "preimport": s["preimport"],
           "packages": packages,
           "declared_sha256": hashlib.sha256(s["source"]).hexdigest()}
    if s["description"]:
        doc["description"] = s["description"]
    if s["pool"]:
        doc["pool"] = s["pool"]
    return json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n"


def build(args, cmd, what):
    r = docker(["build", "-q"] + cmd, capture_output=True, timeout=3600)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        raise SetError(f"docker build of {what} failed (see above)")
    return r.stdout.strip()


def build_set(s, args, work):
    image = f"sandgate/set-{s['language']}-{s['name']}:{args.tag}"
    base = f"sandgate/sandbox-{s['language']}:{args.tag}"
    if docker(["image", "inspect", base], capture_output=True).returncode != 0:
        raise SetError(f"set {s['name']}: base image {base} is missing: build it first "
                       f"(make images)")
    ctx = os.path.join(work, f"{s['language']}-{s['name']}")
    shutil.rmtree(ctx, ignore_errors=True)
    os.makedirs(ctx)
    packages = stage_wheels(s, args.wheelhouse, ctx) + stage_npm(s, args.wheelhouse, ctx)
    with open(os.path.join(ctx, "Dockerfile"), "w") as f:
        f.write(dockerfile(s))
    before = docker(["image", "inspect", "-f", "{{.Id}}", image], capture_output=True).stdout
    stage = build(args, ["--build-arg", f"BASE_IMAGE={base}", "--build-arg",
                         f"SANDGATE_SET_DEBIAN={' '.join(s['debian'])}", ctx], image)
    packages = debian_packages(stage, s["debian"]) + packages
    final = os.path.join(ctx, "final")
    os.makedirs(final)
    with open(os.path.join(final, "set.json"), "w") as f:
        f.write(manifest(s, packages))
    with open(os.path.join(final, "Dockerfile"), "w") as f:
        f.write(f"FROM {stage}\nCOPY set.json /opt/sandgate/set.json\n"
                f"LABEL org.sandgate.set={s['name']}\n")
    build(args, ["-t", image, final], image)
    after = docker(["image", "inspect", "-f", "{{.Id}}", image], capture_output=True).stdout
    say(f"{image}: {'unchanged (cache hit)' if before == after else 'built'}, "
        f"{len(packages)} packages")


def main():
    ap = argparse.ArgumentParser(description="Build the package set images.")
    ap.add_argument("--dir", default=os.environ.get("SANDGATE_FLAVOURS_DIR", "flavours"))
    ap.add_argument("--wheelhouse", default=os.environ.get("SANDGATE_WHEELHOUSE"))
    ap.add_argument("--tag", default=os.environ.get("SANDGATE_TAG") or "latest")
    ap.add_argument("--work", default="build/sets")
    ap.add_argument("--language", action="append", choices=LANGUAGES)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    args.wheelhouse = args.wheelhouse or os.path.join(args.dir, "wheelhouse")
    if not re.match(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$", args.tag):
        raise SetError(f"tag {args.tag!r} is not a Docker tag")
    sets = load_all(args.dir)
    if args.names:
        known = {f"{s['language']}-{s['name']}" for s in sets} | {s["name"] for s in sets}
        for n in args.names:
            if n not in known:
                raise SetError(f"no set '{n}' in {args.dir}")
        sets = [s for s in sets if s["name"] in args.names or
                f"{s['language']}-{s['name']}" in args.names]
    if args.language:
        sets = [s for s in sets if s["language"] in args.language]
    for s in sets:
        if args.check:
            with tempfile.TemporaryDirectory() as ctx:
                check_modules(s, stage_wheels(s, args.wheelhouse, ctx) +
                              stage_npm(s, args.wheelhouse, ctx))
            say(f"{s['language']}-{s['name']}: valid, every package matches its pin")
        else:
            build_set(s, args, os.path.abspath(args.work))
    if not args.check and not args.names:
        write_env(args, sets)


def write_env(args, sets):
    """executors.env: for each language built here, its set images (the
    other language's line is kept as it was)."""
    if not sets:
        return
    path = os.path.join(args.work, f"executors-{args.tag}.env")
    lines = {}
    if os.path.isfile(path):
        for line in open(path, encoding="utf-8").read(MAX_FILE).splitlines():
            if "=" in line:
                lines[line.split("=", 1)[0]] = line
    for lang in sorted({s["language"] for s in sets}):
        key = f"SANDGATE_SETS_{lang.upper()}"
        images = " ".join(f"sandgate/set-{lang}-{s['name']}:{args.tag}" for s in sets
                          if s["language"] == lang)
        lines[key] = f"{key}={images}"
    os.makedirs(args.work, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(v + "\n" for _, v in sorted(lines.items())))
    say(f"executor settings in {path}")


if __name__ == "__main__":
    try:
        main()
    except SetError as e:
        print(f"sets: error: {e}", file=sys.stderr)
        sys.exit(1)
