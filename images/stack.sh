#!/usr/bin/env bash
# stack.sh up | down | wait | reload | status
#
# Runs the compose stack (docker-compose.yml) under the project name
# "sandgate" ($SANDGATE_PROJECT). `make up` / `make down` call this.
#   up      prepare $SANDGATE_STACK_DIR (default build/stack): a client token
#           and tokens file, the gateway<->executor secret, the audit
#           directory; then compose up -d and wait until /readyz is green
#   down    compose down (containers, networks, volumes) and remove the
#           sandbox containers the stack's executors created
#   wait    wait for /readyz only
#   reload  reload the gateway's policies and tokens (SIGHUP sent inside the
#           container by sandgate-reload: `docker kill -s HUP` would switch
#           the restart policy off)
#   status  compose ps
# Works with `docker compose` (v2) or docker-compose 1.29.
set -euo pipefail
cd "$(dirname "$0")/.."

# SANDGATE_PROJECT lets a second stack (the stack test suite) run beside the
# default one: its own compose project and its own sandbox container labels.
PROJECT=${SANDGATE_PROJECT:-sandgate}
export SANDGATE_INSTANCE_PREFIX=${PROJECT}-stack
DAEMON_UID=10001
READY_TIMEOUT_S=${SANDGATE_READY_TIMEOUT_S:-240}
INSTANCES=("$SANDGATE_INSTANCE_PREFIX-python" "$SANDGATE_INSTANCE_PREFIX-nodejs")

say() { echo "stack: $*"; }
die() { echo "stack: error: $*" >&2; exit 1; }

# A setting from the environment, else .env, else the default.
setting() {
    local name=$1 default=$2 line
    if [ -n "${!name:-}" ]; then echo "${!name}"; return; fi
    if [ -f .env ] && line=$(grep -E "^${name}=" .env | tail -1); then
        [ -n "${line#*=}" ] && { echo "${line#*=}"; return; }
    fi
    echo "$default"
}

STACK_DIR=$(setting SANDGATE_STACK_DIR ./build/stack)
PUBLISH=$(setting SANDGATE_PUBLISH 127.0.0.1:9385)
PORT=${PUBLISH##*:}
HOST=${PUBLISH%:*}
[ "$HOST" = "$PUBLISH" ] && HOST=127.0.0.1
[ "$HOST" = 0.0.0.0 ] && HOST=127.0.0.1
export SANDGATE_STACK_DIR=$STACK_DIR

compose() {
    if docker compose version >/dev/null 2>&1; then
        docker compose -p "$PROJECT" -f docker-compose.yml "$@"
    elif command -v docker-compose >/dev/null; then
        docker-compose -p "$PROJECT" -f docker-compose.yml "$@"
    else
        die "neither 'docker compose' nor docker-compose is installed ('make deps' installs it)"
    fi
}

new_secret() { head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n'; }

# Files the daemons read (uid 10001) but nobody else: root:10001, 0640.
prepare() {
    local cfg="$STACK_DIR/config" audit="$STACK_DIR/audit"
    mkdir -p "$cfg" "$audit"
    if [ ! -s "$cfg/client.token" ]; then
        new_secret >"$cfg/client.token"
        say "new client token in $cfg/client.token"
    fi
    if [ ! -s "$cfg/tokens.json" ]; then
        printf '{"tenants": {"default": {"tokens": ["%s"]}}}\n' "$(cat "$cfg/client.token")" \
            >"$cfg/tokens.json"
        say "new tokens file $cfg/tokens.json (tenant \"default\")"
    fi
    [ -s "$cfg/executor.token" ] || new_secret >"$cfg/executor.token"
    if [ "$(id -u)" = 0 ]; then
        chown -R "0:$DAEMON_UID" "$cfg"
        chmod 0750 "$cfg"
        chmod 0640 "$cfg"/*
        chown "$DAEMON_UID:$DAEMON_UID" "$audit"
        chmod 0750 "$audit"
    fi
    DOCKER_GID=$(stat -c %g /var/run/docker.sock) || die "no /var/run/docker.sock"
    export DOCKER_GID
}

wait_ready() {
    local url="http://$HOST:$PORT/readyz" deadline=$((SECONDS + READY_TIMEOUT_S)) body=""
    say "waiting for $url (up to ${READY_TIMEOUT_S} s)"
    while [ $SECONDS -lt $deadline ]; do
        if body=$(python3 - "$url" <<'PY' 2>/dev/null
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=3) as r:
    sys.stdout.write(r.read().decode())
PY
        ); then
            say "ready: $body"
            return 0
        fi
        sleep 1
    done
    compose ps >&2 || true
    compose logs --tail 30 >&2 || true
    die "the gateway did not become ready within ${READY_TIMEOUT_S} s (see the logs above)"
}

sandbox_containers() {
    local inst
    for inst in "${INSTANCES[@]}"; do
        docker ps -aq --filter "label=org.sandgate.executor=$inst"
    done
}

up() {
    prepare
    say "starting the stack (project $PROJECT)"
    compose up -d --remove-orphans
    wait_ready
    local token_file="$STACK_DIR/config/client.token"
    cat <<EOT

sandgate is up on http://$HOST:$PORT  (audit log: $STACK_DIR/audit/audit.log)
Try it:
  curl -s http://$HOST:$PORT/run \\
    -H "Authorization: Bearer \$(cat $token_file)" \\
    -H 'Content-Type: application/json' \\
    -d '{"language": "python", "arguments": {"name": "world"},
         "code_b64": "'\$(printf 'def main(name):\\n    return {"hello": name}\\n' | base64 -w0)'"}'
More: make demo    Stop: make down
EOT
}

down() {
    export DOCKER_GID=${DOCKER_GID:-0}
    say "stopping the stack (project $PROJECT)"
    compose down -v --remove-orphans
    local left
    left=$(sandbox_containers)
    if [ -n "$left" ]; then
        say "removing $(wc -w <<<"$left") sandbox container(s) left by the executors"
        # shellcheck disable=SC2086
        docker rm -f $left >/dev/null
    fi
    say "down"
}

case ${1:-} in
    up) up ;;
    down) down ;;
    wait) wait_ready ;;
    reload) export DOCKER_GID=${DOCKER_GID:-0}; compose exec -T gateway /usr/local/bin/sandgate-reload ;;
    status) export DOCKER_GID=${DOCKER_GID:-0}; compose ps ;;
    *) echo "usage: stack.sh up|down|wait|reload|status" >&2; exit 2 ;;
esac
