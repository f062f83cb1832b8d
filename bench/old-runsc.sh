#!/usr/bin/env bash
# old-runsc.sh - register bookworm's own runsc (0.0~20221219, the one sandgate
# ran on before host-setup.sh moved to bookworm-backports) beside the current
# one, as runtime "runsc-20221219" with the same arguments on the ptrace
# platform (the only one it has), so that run-runsc.sh can compare the two in
# one run. The package is fetched with apt (signature checked as usual) and
# unpacked into build/runsc-20221219/; daemon.json gains the runtime and
# dockerd reloads it (SIGHUP, never a restart). Idempotent; needs root.
# Prints the runtime name.
set -euo pipefail
cd "$(dirname "$0")/.."
NAME=runsc-20221219
VERSION=${OLD_RUNSC_VERSION:-0.0~20221219.0-2+b3}
DIR=$PWD/build/$NAME
DAEMON_JSON=${SANDGATE_DOCKER_DAEMON_JSON:-/etc/docker/daemon.json}

if ! [ -x "$DIR/usr/bin/runsc" ]; then
    mkdir -p "$DIR"
    (cd "$DIR" && apt-get download -q "runsc=$VERSION" >&2)
    dpkg-deb -x "$DIR"/runsc_*.deb "$DIR"
fi
# (whole outputs first: grep -q would close the pipe early, and pipefail
# would call the writer's SIGPIPE a failure)
registered() { [[ $(docker info --format '{{json .Runtimes}}') == *"\"$NAME\""* ]]; }
[[ $("$DIR/usr/bin/runsc" --version) == *20221219* ]] || { echo "old-runsc: $DIR/usr/bin/runsc is not 20221219" >&2; exit 1; }
changed=$(python3 - "$DAEMON_JSON" "$NAME" "$DIR/usr/bin/runsc" <<'PY'
import json, os, sys
path, name, binary = sys.argv[1:]
cfg = json.load(open(path))
want = {"path": binary, "runtimeArgs": ["--network=none", "--oci-seccomp", "--platform=ptrace"]}
if cfg.setdefault("runtimes", {}).get(name) != want:
    cfg["runtimes"][name] = want
    with open(path + ".tmp", "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    os.replace(path + ".tmp", path)
    print("changed")
PY
)
if [ "$changed" = changed ]; then
    kill -HUP "$(pgrep -x dockerd)"
    for _ in $(seq 20); do
        registered && break
        sleep 0.5
    done
fi
registered || { echo "old-runsc: $NAME not registered" >&2; exit 1; }
echo "$NAME"
