"""The PEP 517 build backend of the sandgate client: a pure-Python wheel (and
an sdist, and a PEP 660 editable wheel) written with the standard library.

The package is src/sandgate; its version is __version__ in its __init__.py.
"""
from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

NAME = "sandgate"
SUMMARY = "Client of sandgate's HTTP API: sandboxed Python and JavaScript jobs, streams, sessions"
REQUIRES_PYTHON = ">=3.9"
LICENSE = "Apache-2.0"
TAG = "py3-none-any"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(HERE, "src")
EPOCH = (1980, 1, 1, 0, 0, 0)  # fixed times: the same sources give the same wheel


def _version():
    with open(os.path.join(SRC, NAME, "__init__.py"), encoding="utf-8") as f:
        m = re.search(r'^__version__ = "([0-9A-Za-z.+-]+)"$', f.read(), re.M)
    if not m:
        raise RuntimeError("no __version__ in src/sandgate/__init__.py")
    return m.group(1)


def _dist_info():
    return f"{NAME}-{_version()}.dist-info"


def _metadata():
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {_version()}\nSummary: {SUMMARY}\n"
            f"License: {LICENSE}\nRequires-Python: {REQUIRES_PYTHON}\n"
            f"Description-Content-Type: text/markdown\n\n{readme}")


def _wheel_file():
    return f"Wheel-Version: 1.0\nGenerator: sandgate_build\nRoot-Is-Purelib: true\nTag: {TAG}\n"


def _package_files():
    out = []
    for root, dirs, files in os.walk(os.path.join(SRC, NAME)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py") or name == "py.typed":
                path = os.path.join(root, name)
                out.append((os.path.relpath(path, SRC).replace(os.sep, "/"), path))
    return out


def _write_wheel(directory, entries):
    """entries: (archive name, bytes); adds the dist-info and its RECORD."""
    info = _dist_info()
    entries = entries + [(f"{info}/METADATA", _metadata().encode()),
                         (f"{info}/WHEEL", _wheel_file().encode())]
    record = []
    filename = f"{NAME}-{_version()}-{TAG}.whl"
    with zipfile.ZipFile(os.path.join(directory, filename), "w", zipfile.ZIP_DEFLATED) as z:
        for arcname, data in entries:
            z.writestr(zipfile.ZipInfo(arcname, EPOCH), data, zipfile.ZIP_DEFLATED)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            record.append(f"{arcname},sha256={digest.decode()},{len(data)}")
        record.append(f"{info}/RECORD,,")
        z.writestr(zipfile.ZipInfo(f"{info}/RECORD", EPOCH), "\n".join(record) + "\n")
    return filename


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def get_requires_for_build_wheel(config_settings=None):
    return []


get_requires_for_build_sdist = get_requires_for_build_editable = get_requires_for_build_wheel


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    info = os.path.join(metadata_directory, _dist_info())
    os.makedirs(info, exist_ok=True)
    for name, text in (("METADATA", _metadata()), ("WHEEL", _wheel_file())):
        with open(os.path.join(info, name), "w", encoding="utf-8") as f:
            f.write(text)
    return _dist_info()


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, [(a, _read(p)) for a, p in _package_files()])


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """A wheel holding only a .pth file that puts src/ on the path."""
    return _write_wheel(wheel_directory, [(f"_{NAME}_editable.pth", (SRC + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    base = f"{NAME}-{_version()}"
    filename = base + ".tar.gz"
    paths = ["pyproject.toml", "README.md", "_build/sandgate_build.py"]
    paths += ["src/" + a for a, _ in _package_files()]
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz") as tar:
        for rel in paths + ["PKG-INFO"]:
            data = _metadata().encode() if rel == "PKG-INFO" else _read(os.path.join(HERE, rel))
            ti = tarfile.TarInfo(f"{base}/{rel}")
            ti.size, ti.mode, ti.mtime = len(data), 0o644, 315532800
            tar.addfile(ti, io.BytesIO(data))
    return filename
