#!/usr/bin/env bash
# host-setup.sh [--check | --fix]
#
# Checks (and with --fix, as root on Debian, repairs) what the sandgate stack
# needs from the host: a reachable dockerd, the runsc runtime registered with
# the arguments sandgate relies on, and a memory cgroup for container limits.
#   --check  report problems with the command that fixes each; exit 1 if any
#   --fix    install docker.io + runsc if missing, register runsc in
#            /etc/docker/daemon.json, start (or reload) dockerd; say what changed
set -uo pipefail

mode=${1:---check}
DAEMON_JSON=${SANDGATE_DOCKER_DAEMON_JSON:-/etc/docker/daemon.json}
DOCKERD_LOG=${SANDGATE_DOCKERD_LOG:-/var/log/sandgate-dockerd.log}
RUNSC_ARGS='["--network=none","--oci-seccomp"]'

say() { echo "host-setup: $*"; }
problems=0
problem() { echo "host-setup: PROBLEM: $*" >&2; problems=$((problems + 1)); }

docker_ok() { docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

runsc_registered() {
    docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"runsc"'
}

runsc_args_ok() {
    # dockerd only knows the runtime args from its config file.
    [ -f "$DAEMON_JSON" ] && python3 - "$DAEMON_JSON" <<'PY'
import json, sys
cfg = json.load(open(sys.argv[1]))
args = cfg.get("runtimes", {}).get("runsc", {}).get("runtimeArgs", [])
sys.exit(0 if "--network=none" in args and "--oci-seccomp" in args else 1)
PY
}

fix_packages() {
    local missing=()
    command -v dockerd >/dev/null || missing+=(docker.io)
    command -v runsc >/dev/null || missing+=(runsc)
    command -v python3 >/dev/null || missing+=(python3)
    if [ ${#missing[@]} -gt 0 ]; then
        say "installing ${missing[*]} (apt)"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >/dev/null && apt-get install -y -qq "${missing[@]}" >/dev/null ||
            { problem "apt-get install ${missing[*]} failed"; return 1; }
    fi
}

fix_daemon_json() {
    mkdir -p "$(dirname "$DAEMON_JSON")"
    local before=""
    [ -f "$DAEMON_JSON" ] && before=$(cat "$DAEMON_JSON")
    python3 - "$DAEMON_JSON" "$(command -v runsc)" <<'PY'
import json, os, sys
path, runsc = sys.argv[1], sys.argv[2]
cfg = {}
if os.path.exists(path) and os.path.getsize(path) > 0:
    cfg = json.load(open(path))
rt = cfg.setdefault("runtimes", {}).setdefault("runsc", {})
rt["path"] = runsc
args = rt.setdefault("runtimeArgs", [])
for a in ("--network=none", "--oci-seccomp"):
    if a not in args:
        args.append(a)
tmp = path + ".tmp"
with open(tmp, "w") as f:
    json.dump(cfg, f, indent=2)
    f.write("\n")
os.replace(tmp, path)
PY
    if [ "$before" != "$(cat "$DAEMON_JSON")" ]; then
        say "registered runsc (args --network=none --oci-seccomp) in $DAEMON_JSON"
        return 0
    fi
    return 1
}

start_dockerd() {
    if pgrep -x dockerd >/dev/null; then
        return 0
    fi
    say "starting dockerd (log: $DOCKERD_LOG)"
    nohup dockerd >"$DOCKERD_LOG" 2>&1 &
    for _ in $(seq 1 60); do
        docker_ok && return 0
        sleep 0.5
    done
    problem "dockerd did not become reachable; see $DOCKERD_LOG"
    return 1
}

if [ "$mode" = "--fix" ]; then
    [ "$(id -u)" = 0 ] || { echo "host-setup: --fix needs root" >&2; exit 1; }
    fix_packages || exit 1
    changed=0
    fix_daemon_json && changed=1
    if pgrep -x dockerd >/dev/null && [ $changed = 1 ]; then
        say "reloading dockerd (SIGHUP) to pick up the runtime"
        pkill -HUP -x dockerd
        sleep 1
    fi
    start_dockerd || exit 1
    for _ in $(seq 1 20); do runsc_registered && break; sleep 0.5; done
elif [ "$mode" != "--check" ]; then
    echo "usage: host-setup.sh [--check | --fix]" >&2
    exit 2
fi

if ! docker_ok; then
    problem "dockerd is not reachable on /var/run/docker.sock. Fix: 'make up' as root installs and starts it, or run 'images/host-setup.sh --fix'."
else
    runsc_registered || problem "the runsc runtime is not registered with dockerd. Fix: add {\"runtimes\":{\"runsc\":{\"path\":\"/usr/bin/runsc\",\"runtimeArgs\":$RUNSC_ARGS}}} to $DAEMON_JSON and 'kill -HUP \$(pidof dockerd)', or run 'images/host-setup.sh --fix'."
    runsc_args_ok || problem "runsc must run with --network=none (no sandbox network) and --oci-seccomp (otherwise gVisor ignores seccomp profiles). Fix: set runtimeArgs $RUNSC_ARGS for runsc in $DAEMON_JSON and reload dockerd, or run 'images/host-setup.sh --fix'."
    if ! [ -d /sys/fs/cgroup/memory ] && ! grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
        problem "no memory cgroup controller: container memory limits cannot be enforced."
    fi
fi
[ $problems = 0 ] && say "ok: dockerd reachable, runsc registered with $RUNSC_ARGS"
[ $problems = 0 ]
