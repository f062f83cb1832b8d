"""Write the image's runtime listing (JSON, stdout) at image build time:
the interpreter, every Python distribution with its version and the
top-level modules it provides, the standard library's modules, and every
Debian package with its version. The executor reads the file from the image
at start (GET /v1/runtime); nothing here is written by hand, so the listing
is what the image holds.

Also writes, next to this file, what the runner's child needs before the
job and may not compute there: native_objects.txt, every extension module on
the import path, which it maps (isolation.py, map_native), and mpl/, the
font list matplotlib would otherwise build in each job by a scan that starts
`fc-list` (runner.py, child_probes). Every image build that adds packages
runs this script, so both follow the image."""
import importlib.metadata as md
import json
import os
import platform
import subprocess
import sys


def distributions():
    provides = {}
    for module, dists in md.packages_distributions().items():
        if module.startswith("_") or not module.isidentifier():
            continue
        for d in dists:
            provides.setdefault(d.lower(), set()).add(module)
    out = {}
    for d in md.distributions():
        name = d.metadata["Name"]
        if not name:
            continue
        out[name.lower()] = {"name": name, "version": d.version,
                             "modules": sorted(provides.get(name.lower(), ()))}
    return [out[k] for k in sorted(out)]


def debian_packages():
    text = subprocess.run(["dpkg-query", "-W", "-f", "${Package}\t${Version}\n"],
                          check=True, capture_output=True, text=True).stdout
    return [{"name": n, "version": v} for n, v in
            sorted(line.split("\t", 1) for line in text.splitlines() if "\t" in line)]


doc = {
    "language": "python",
    "interpreter": {"name": platform.python_implementation(),
                    "version": platform.python_version()},
    "stdlib_modules": sorted(m for m in sys.stdlib_module_names if not m.startswith("_")),
    "packages": distributions(),
    "system_packages": debian_packages(),
}
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # nothing but the runner's files in its directory
import isolation  # noqa: E402 - next to this file in the image

with open(isolation.NATIVE_LIST, "w", encoding="utf-8") as native:
    native.write("".join(p + "\n" for p in isolation.native_objects(sys.path[1:])))
os.environ["MPLCONFIGDIR"] = os.path.join(HERE, "mpl")
try:
    import matplotlib.font_manager  # noqa: F401 - writes mpl/fontlist-v*.json
except ImportError:
    pass
json.dump(doc, sys.stdout, indent=None, separators=(",", ":"), sort_keys=True)
sys.stdout.write("\n")
