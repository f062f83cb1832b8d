#!/usr/bin/env bash
# swarm.sh up | down | wait | status
#
# Runs sandgate as a Docker Swarm stack (deploy/swarm/stack.yml) named
# $SANDGATE_STACK_NAME (default "sandgate"). `make swarm-up` / `make
# swarm-down` call this. Run it on a manager node.
#   up      prepare $SANDGATE_SWARM_DIR (default build/swarm): a client token
#           and tokens file, the gateway<->executor secret; name each secret
#           and config after its content (a change is a rotation + rolling
#           update); with SANDGATE_LABEL_NODE=1 on a single-node swarm, label
#           this node as a sandbox host; docker stack deploy; wait for /readyz
#   down    docker stack rm (services, networks, and the stack's secrets and
#           configs), wait until its tasks are gone, then remove any sandbox
#           container still labelled as this stack's and the stack's volumes
#           (the executors' session records) on this node
#   wait    wait for /readyz only
#   status  docker stack ps
# The swarm itself (docker swarm init/join) and the per-node setup (runsc
# registered, images loaded) are the operator's; see the README's Scale-out.
set -euo pipefail
cd "$(dirname "$0")/../.."

STACK=${SANDGATE_STACK_NAME:-sandgate}
export SANDGATE_STACK_NAME=$STACK
SWARM_DIR=${SANDGATE_SWARM_DIR:-$PWD/build/swarm}
export SANDGATE_SWARM_DIR=$SWARM_DIR
export SANDGATE_POLICIES_SRC=${SANDGATE_POLICIES_SRC:-$PWD/policies}
export SANDGATE_PORT=${SANDGATE_PORT:-9385}
READY_TIMEOUT_S=${SANDGATE_READY_TIMEOUT_S:-240}
DOWN_TIMEOUT_S=${SANDGATE_DOWN_TIMEOUT_S:-120}
TAG=${SANDGATE_TAG:-latest}
export SANDGATE_GATEWAY_IMAGE=${SANDGATE_GATEWAY_IMAGE:-sandgate/gateway:$TAG}
export SANDGATE_EXECUTOR_IMAGE=${SANDGATE_EXECUTOR_IMAGE:-sandgate/executor:$TAG}
export SANDBOX_BASE_PYTHON_IMAGE=${SANDBOX_BASE_PYTHON_IMAGE:-sandgate/sandbox-python:$TAG}
export SANDBOX_BASE_NODEJS_IMAGE=${SANDBOX_BASE_NODEJS_IMAGE:-sandgate/sandbox-nodejs:$TAG}
INSTANCES=("$STACK-swarm-python" "$STACK-swarm-nodejs")

say() { echo "swarm: $*"; }
die() { echo "swarm: error: $*" >&2; exit 1; }

new_secret() { head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
# <prefix>_<first 12 hex of the file's sha256>: a new name for new content.
content_name() { echo "${STACK}_$1_$(sha256sum "$2" | cut -c1-12)"; }

check_swarm() {
    local state
    state=$(docker info --format '{{.Swarm.LocalNodeState}} {{.Swarm.ControlAvailable}}') ||
        die "dockerd is not reachable"
    [ "${state% *}" = active ] ||
        die "this engine is not in a swarm (docker swarm init, or join one)"
    [ "${state#* }" = true ] || die "run this on a manager node"
}

prepare() {
    mkdir -p "$SWARM_DIR"
    chmod 0700 "$SWARM_DIR"
    if [ ! -s "$SWARM_DIR/client.token" ]; then
        new_secret >"$SWARM_DIR/client.token"
        say "new client token in $SWARM_DIR/client.token"
    fi
    if [ ! -s "$SWARM_DIR/tokens.json" ]; then
        printf '{"tenants": {"default": {"tokens": ["%s"]}}}\n' \
            "$(cat "$SWARM_DIR/client.token")" >"$SWARM_DIR/tokens.json"
        say "new tokens file $SWARM_DIR/tokens.json (tenant \"default\")"
    fi
    [ -s "$SWARM_DIR/executor.token" ] || new_secret >"$SWARM_DIR/executor.token"
    chmod 0600 "$SWARM_DIR"/*
    export SANDGATE_TOKENS_NAME SANDGATE_EXECUTOR_TOKEN_NAME
    SANDGATE_TOKENS_NAME=$(content_name tokens "$SWARM_DIR/tokens.json")
    SANDGATE_EXECUTOR_TOKEN_NAME=$(content_name executor_token "$SWARM_DIR/executor.token")
    local p var
    for p in default strict permissive; do
        [ -f "$SANDGATE_POLICIES_SRC/$p.json" ] || die "no policy $SANDGATE_POLICIES_SRC/$p.json"
        var=SANDGATE_POLICY_${p^^}_NAME
        export "$var=$(content_name "policy_$p" "$SANDGATE_POLICIES_SRC/$p.json")"
    done
    DOCKER_GID=$(stat -c %g /var/run/docker.sock) || die "no /var/run/docker.sock"
    export DOCKER_GID
}

# A single-node swarm has nobody to label its node: do it when asked.
label_node() {
    local nodes
    nodes=$(docker node ls -q | wc -l)
    if [ "${SANDGATE_LABEL_NODE:-0}" = 1 ]; then
        [ "$nodes" = 1 ] || die "SANDGATE_LABEL_NODE=1 is for a single-node swarm ($nodes nodes)"
        docker node update --label-add sandgate.sandbox=true "$(docker info --format "{{.Swarm.NodeID}}")" >/dev/null
        say "labelled this node sandgate.sandbox=true"
    fi
    local labelled
    labelled=$(docker node ls -q | xargs docker node inspect \
        --format '{{index .Spec.Labels "sandgate.sandbox"}}' | grep -c '^true$' || true)
    [ "$labelled" -gt 0 ] || die "no node is labelled sandgate.sandbox=true: the executors " \
        "would have nowhere to run (docker node update --label-add sandgate.sandbox=true NODE," \
        " or SANDGATE_LABEL_NODE=1 on a single-node swarm)"
    say "$labelled sandbox node(s)"
}

# /readyz through the published port; where that cannot be reached from this
# host (the routing mesh does not answer on 127.0.0.1 everywhere: see the
# README's Scale-out), through a gateway task on this node (docker exec).
ready_once() {
    python3 - "http://127.0.0.1:$SANDGATE_PORT/readyz" <<'PY' 2>/dev/null && return 0
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=3) as r:
    sys.stdout.write(r.read().decode())
PY
    local c
    for c in $(docker ps -q --filter "label=com.docker.swarm.service.name=${STACK}_gateway"); do
        docker exec "$c" /usr/local/bin/sandgate-probe 9385 /readyz >/dev/null 2>&1 &&
            { echo "(gateway task ${c:0:12}, local)"; return 0; }
    done
    return 1
}

wait_ready() {
    local deadline=$((SECONDS + READY_TIMEOUT_S)) body=""
    say "waiting for /readyz on port $SANDGATE_PORT (up to ${READY_TIMEOUT_S} s)"
    while [ $SECONDS -lt $deadline ]; do
        if body=$(ready_once); then
            say "ready: $body"
            return 0
        fi
        sleep 1
    done
    docker stack ps --no-trunc "$STACK" >&2 || true
    die "the gateway did not become ready within ${READY_TIMEOUT_S} s"
}

up() {
    check_swarm
    prepare
    label_node
    say "deploying stack $STACK (port $SANDGATE_PORT)"
    docker stack deploy --prune -c deploy/swarm/stack.yml "$STACK"
    wait_ready
    cat <<EOT

sandgate is up on port $SANDGATE_PORT of every swarm node (routing mesh).
  client token: $SWARM_DIR/client.token
  scale:        docker service scale ${STACK}_gateway=3
  stop:         make swarm-down
EOT
}

sandbox_containers() {
    local inst
    for inst in "${INSTANCES[@]}"; do
        docker ps -aq --filter "label=org.sandgate.executor=$inst"
    done
}

down() {
    say "removing stack $STACK"
    docker stack rm "$STACK" || true
    # stack rm returns at once; the tasks drain (stop_grace_period) first.
    local deadline=$((SECONDS + DOWN_TIMEOUT_S))
    while [ $SECONDS -lt $deadline ] &&
        [ -n "$(docker ps -aq --filter "label=com.docker.stack.namespace=$STACK")" ]; do
        sleep 1
    done
    while [ $SECONDS -lt $deadline ] &&
        [ -n "$(docker network ls -q --filter "label=com.docker.stack.namespace=$STACK")" ]; do
        sleep 1
    done
    local left
    left=$(sandbox_containers)
    if [ -n "$left" ]; then
        say "removing $(wc -w <<<"$left") sandbox container(s) left by the executors"
        # shellcheck disable=SC2086
        docker rm -f $left >/dev/null
    fi
    [ -z "$(docker ps -aq --filter "label=com.docker.stack.namespace=$STACK")" ] ||
        die "tasks of $STACK still present after ${DOWN_TIMEOUT_S} s"
    # the executors' session records on this node (a stop ended the sessions)
    local vols
    vols=$(docker volume ls -q --filter "label=com.docker.stack.namespace=$STACK")
    if [ -n "$vols" ]; then
        # shellcheck disable=SC2086
        docker volume rm $vols >/dev/null
    fi
    say "down"
}

case ${1:-} in
    up) up ;;
    down) down ;;
    wait) wait_ready ;;
    status) docker stack ps "$STACK" ;;
    *) echo "usage: swarm.sh up|down|wait|status" >&2; exit 2 ;;
esac
