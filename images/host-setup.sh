#!/usr/bin/env bash
# host-setup.sh [--check | --fix]
#
# Checks (and with --fix, as root on Debian, repairs) what the sandgate stack
# needs from the host: a reachable dockerd, a current runsc registered with
# the arguments sandgate relies on, and a memory cgroup for container limits.
#   --check  report problems with the command that fixes each; exit 1 if any
#   --fix    install docker.io if missing and runsc >= the minimum (on
#            bookworm from bookworm-backports, pinned: host-runsc.sh), pick
#            the gVisor platform by probe, register runsc (and runsc-net,
#            the networked pools' runtime) with it in /etc/docker/daemon.json,
#            start (or reload: SIGHUP, never a restart) dockerd, install the
#            egress packet filter for the stack's egress network if it exists
#            (egress-firewall.sh); say what changed
#
# A dockerd that is still running but not answering (starting up, or on its
# way out after it was stopped) is waited for, up to
# SANDGATE_DOCKERD_EXIT_WAIT_S seconds [30]: if it answers it is kept, if it
# exits a new one is started, if it does neither that is a problem (never a
# second dockerd beside a live one). SANDGATE_DOCKERD_NAME (process name
# watched) [dockerd], SANDGATE_DOCKERD_CMD (what starts one) [dockerd] and
# SANDGATE_DOCKER_CLI [docker] exist so tests/integration/test_host_setup.py
# can drive this with a fake daemon; the script can be sourced for its
# functions.
set -uo pipefail
# shellcheck source=images/host-runsc.sh
. "$(dirname "${BASH_SOURCE[0]}")/host-runsc.sh"

DAEMON_JSON=${SANDGATE_DOCKER_DAEMON_JSON:-/etc/docker/daemon.json}
DOCKERD_LOG=${SANDGATE_DOCKERD_LOG:-/var/log/sandgate-dockerd.log}
DOCKERD_NAME=${SANDGATE_DOCKERD_NAME:-dockerd}
DOCKERD_CMD=${SANDGATE_DOCKERD_CMD:-dockerd}
DOCKER_CLI=${SANDGATE_DOCKER_CLI:-docker}
DOCKERD_EXIT_WAIT_S=${SANDGATE_DOCKERD_EXIT_WAIT_S:-30}
DOCKERD_POLL_S=0.2
RUNSC_ARGS='["--network=none","--oci-seccomp"]'

say() { echo "host-setup: $*"; }
problems=0
problem() { echo "host-setup: PROBLEM: $*" >&2; problems=$((problems + 1)); }

docker_ok() { "$DOCKER_CLI" version --format '{{.Server.Version}}' >/dev/null 2>&1; }

# PIDs of live dockerd processes: a zombie (exited, not yet reaped) is gone.
dockerd_pids() {
    local p
    for p in $(pgrep -x "$DOCKERD_NAME"); do
        case $(ps -o stat= -p "$p" 2>/dev/null) in
            Z* | "") ;;
            *) echo "$p" ;;
        esac
    done
}

dockerd_running() { [ -n "$(dockerd_pids)" ]; }

# A running dockerd that does not answer is starting or exiting: wait until it
# answers (0), or exits (1), or the wait is over (2).
wait_dockerd_settles() {
    local deadline=$((SECONDS + DOCKERD_EXIT_WAIT_S))
    while dockerd_running; do
        docker_ok && return 0
        [ $SECONDS -ge $deadline ] && return 2
        sleep "$DOCKERD_POLL_S"
    done
    return 1
}

runsc_registered() {
    "$DOCKER_CLI" info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"runsc"'
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
    command -v python3 >/dev/null || missing+=(python3)
    if [ ${#missing[@]} -gt 0 ]; then
        say "installing ${missing[*]} (apt)"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >/dev/null && apt-get install -y -qq "${missing[@]}" >/dev/null ||
            { problem "apt-get install ${missing[*]} failed"; return 1; }
    fi
    fix_runsc
}

fix_daemon_json() {
    mkdir -p "$(dirname "$DAEMON_JSON")"
    local before=""
    [ -f "$DAEMON_JSON" ] && before=$(cat "$DAEMON_JSON")
    python3 - "$DAEMON_JSON" "$(runsc_bin)" "${RUNSC_PLATFORM_CHOSEN:-}" <<'PY'
import json, os, sys
path, runsc, platform = sys.argv[1], sys.argv[2], sys.argv[3]
cfg = {}
if os.path.exists(path) and os.path.getsize(path) > 0:
    cfg = json.load(open(path))
rt = cfg.setdefault("runtimes", {}).setdefault("runsc", {})
rt["path"] = runsc
args = rt.setdefault("runtimeArgs", [])
for a in ("--network=none", "--oci-seccomp"):
    if a not in args:
        args.append(a)
# The networked pools' runtime (README, "Network"): gVisor passes socket calls
# to the host kernel inside the container's own network namespace, because
# runsc's own network stack does not start under this dockerd. Only sandboxes
# on the internal egress network use it; an existing entry is left as it is.
cfg["runtimes"].setdefault("runsc-net", {"path": runsc,
                                         "runtimeArgs": ["--network=host", "--oci-seccomp"]})
# The platform the probe chose (host-runsc.sh), on both: any other --platform
# goes, every other argument stays.
if platform:
    for name in ("runsc", "runsc-net"):
        rt = cfg["runtimes"][name]
        rest = [a for a in rt.get("runtimeArgs", []) if not a.startswith("--platform=")]
        rt["runtimeArgs"] = rest + ["--platform=" + platform]
tmp = path + ".tmp"
with open(tmp, "w") as f:
    json.dump(cfg, f, indent=2)
    f.write("\n")
os.replace(tmp, path)
PY
    if [ "$before" != "$(cat "$DAEMON_JSON")" ]; then
        say "registered runsc (args --network=none --oci-seccomp${RUNSC_PLATFORM_CHOSEN:+ --platform=$RUNSC_PLATFORM_CHOSEN}) and runsc-net (--network=host, networked pools only) in $DAEMON_JSON"
        return 0
    fi
    return 1
}

start_dockerd() {
    docker_ok && return 0
    if dockerd_running; then
        say "dockerd (pid $(dockerd_pids | tr '\n' ' ')) runs but does not answer: waiting up to ${DOCKERD_EXIT_WAIT_S}s for it to answer or exit"
        wait_dockerd_settles
        case $? in
            0) return 0 ;;
            2)
                problem "dockerd (pid $(dockerd_pids | tr '\n' ' ')) neither answers nor exits after ${DOCKERD_EXIT_WAIT_S}s; stop it, then run 'images/host-setup.sh --fix' again"
                return 1
                ;;
        esac
        say "the old dockerd has exited"
    fi
    say "starting dockerd (log: $DOCKERD_LOG)"
    nohup "$DOCKERD_CMD" >"$DOCKERD_LOG" 2>&1 &
    for _ in $(seq 1 60); do
        docker_ok && return 0
        sleep 0.5
    done
    problem "dockerd did not become reachable; see $DOCKERD_LOG"
    return 1
}

# The stack's egress network (make up made it), when it exists: its packet
# filter (egress-firewall.sh), so networked sandboxes reach only the proxy.
fix_egress_firewall() {
    local net=${SANDGATE_EGRESS_NETWORK:-sandgate-egress} sub proxy
    "$DOCKER_CLI" network inspect "$net" >/dev/null 2>&1 || return 0
    sub=$("$DOCKER_CLI" network inspect -f '{{range .IPAM.Config}}{{.Subnet}} {{end}}' "$net" | awk '{print $1}')
    proxy=${SANDGATE_EGRESS_PROXY_IP:-${sub%.0/24}.2}
    "$(dirname "${BASH_SOURCE[0]}")/egress-firewall.sh" install "$net" "$proxy:3128" ||
        problem "the egress packet filter of $net could not be installed"
}

main() {
mode=${1:---check}
if [ "$mode" = "--fix" ]; then
    [ "$(id -u)" = 0 ] || { echo "host-setup: --fix needs root" >&2; exit 1; }
    fix_packages || exit 1
    choose_platform || exit 1
    changed=0
    fix_daemon_json && changed=1
    if dockerd_running && [ $changed = 1 ]; then
        say "reloading dockerd (SIGHUP) to pick up the runtime"
        kill -HUP $(dockerd_pids)
        sleep 1
    fi
    start_dockerd || exit 1
    for _ in $(seq 1 20); do runsc_registered && break; sleep 0.5; done
    record_runsc
    fix_egress_firewall
elif [ "$mode" != "--check" ]; then
    echo "usage: host-setup.sh [--check | --fix]" >&2
    exit 2
fi

if ! docker_ok; then
    problem "dockerd is not reachable on /var/run/docker.sock. Fix: 'make up' as root installs and starts it, or run 'images/host-setup.sh --fix'."
else
    runsc_registered || problem "the runsc runtime is not registered with dockerd. Fix: add {\"runtimes\":{\"runsc\":{\"path\":\"/usr/bin/runsc\",\"runtimeArgs\":$RUNSC_ARGS}}} to $DAEMON_JSON and 'kill -HUP \$(pidof dockerd)', or run 'images/host-setup.sh --fix'."
    runsc_args_ok || problem "runsc must run with --network=none (no sandbox network) and --oci-seccomp (otherwise gVisor ignores seccomp profiles). Fix: set runtimeArgs $RUNSC_ARGS for runsc in $DAEMON_JSON and reload dockerd, or run 'images/host-setup.sh --fix'."
    check_runsc_version
    if ! [ -d /sys/fs/cgroup/memory ] && ! grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
        problem "no memory cgroup controller: container memory limits cannot be enforced."
    fi
fi
if docker_ok && ! "$DOCKER_CLI" info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"runsc-net"'; then
    say "note: runtime runsc-net is not registered: networked jobs are unavailable (README, \"Network\"; 'images/host-setup.sh --fix' adds it)"
fi
[ $problems = 0 ] && say "ok: dockerd reachable, runsc registered with $RUNSC_ARGS"
[ $problems = 0 ]
}

# Sourced (tests): only the functions above.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    main "$@"
fi
