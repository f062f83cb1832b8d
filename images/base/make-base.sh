#!/usr/bin/env bash
# make-base.sh [IMAGE]
#
# Builds the offline base image (default sandgate/base:bookworm) when no
# registry is reachable: debootstrap --variant=minbase bookworm into a
# temporary directory from the Debian mirror this machine's apt already uses,
# then `docker import`. Needs root, debootstrap and a running dockerd.
#
# The mirror is read from /etc/apt/sources.list, /etc/apt/sources.list.d/*.list
# and deb822 /etc/apt/sources.list.d/*.sources (the first `deb` URI serving the
# suite "bookworm"); SANDGATE_DEBIAN_MIRROR overrides it.
set -euo pipefail

IMAGE=${1:-sandgate/base:bookworm}
SUITE=bookworm

say() { echo "make-base: $*"; }
die() { echo "make-base: error: $*" >&2; exit 1; }

# Prints the first URI of a `deb` entry that serves $SUITE.
find_mirror() {
    python3 - "$SUITE" /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
        /etc/apt/sources.list.d/*.sources <<'PY'
import os, re, sys

suite = sys.argv[1]

def one_line(path):
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.split("#", 1)[0].strip()
        line = re.sub(r"\[[^\]]*\]", " ", line)  # drop [arch=... signed-by=...]
        parts = line.split()
        if len(parts) >= 3 and parts[0] == "deb" and parts[2] == suite:
            yield parts[1]

def deb822(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    for stanza in re.split(r"\n\s*\n", text):
        fields = {}
        for line in stanza.splitlines():
            if line.lstrip().startswith("#") or ":" not in line:
                continue
            key, _, value = line.partition(":")
            fields[key.strip().lower()] = value.split()
        if "deb" in fields.get("types", []) and suite in fields.get("suites", []) \
                and fields.get("enabled", ["yes"])[0].lower() != "no":
            yield from fields.get("uris", [])

for path in sys.argv[2:]:
    if not os.path.isfile(path):
        continue
    reader = deb822 if path.endswith(".sources") else one_line
    for uri in reader(path):
        if uri.startswith(("http://", "https://", "file:/")):
            print(uri)
            sys.exit(0)
sys.exit(1)
PY
}

[ "$(id -u)" = 0 ] || die "debootstrap needs root"
command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install debootstrap, or 'make deps')"
docker version >/dev/null 2>&1 || die "dockerd is not reachable (images/host-setup.sh --fix)"

mirror=${SANDGATE_DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
    mirror=$(find_mirror) ||
        die "no 'deb' source for $SUITE in the apt sources; set SANDGATE_DEBIAN_MIRROR=<uri>"
fi

dir=$(mktemp -d /var/tmp/sandgate-base.XXXXXX)
trap 'rm -rf "$dir"' EXIT
say "debootstrap --variant=minbase $SUITE from $mirror (about 30 s)"
started=$(date +%s)
debootstrap --variant=minbase "$SUITE" "$dir" "$mirror" >"$dir.log" 2>&1 ||
    { tail -20 "$dir.log" >&2; rm -f "$dir.log"; die "debootstrap failed"; }
rm -f "$dir.log"
# Keep the image small and reproducible: no package caches, no apt lists.
rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/* "$dir"/tmp/*
say "importing as $IMAGE"
tar -C "$dir" -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["/bin/bash"]' - "$IMAGE" >/dev/null
say "done in $(( $(date +%s) - started )) s: $IMAGE"
