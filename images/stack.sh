#!/usr/bin/env bash
# stack.sh up | down | wait | reload | status
#
# Runs the compose stack (docker-compose.yml) under the project name
# "sandgate" ($SANDGATE_PROJECT). `make up` / `make down` call this.
#   up      prepare $SANDGATE_STACK_DIR (default build/stack): a client token
#           and tokens file, the gateway<->executor secret, the audit
#           directory; create the stack, bind the trusted networks (below),
#           then compose up -d and wait until /readyz is green
#           and install the egress network's host packet filter
#           (egress-firewall.sh: its sandboxes reach the proxy and nothing
#           else, this host included; needs root)
#   down    remove that filter, compose down (containers, networks, volumes)
#           and remove the sandbox containers the stack's executors created
#   wait    wait for /readyz only
#   reload  reload the gateway's policies and tokens (SIGHUP sent inside the
#           container by sandgate-reload: `docker kill -s HUP` would switch
#           the restart policy off)
#   status  compose ps
# Works with `docker compose` (v2) or docker-compose 1.29.
#
# Trusted networks (requests without a token), rewritten in the tokens file
# at every `up` from what Docker says now:
#   - tenant "default": the address the gateway sees for the host's own
#     requests to the published port. Docker's proxy (or, with the userland
#     proxy off, its hairpin NAT) connects from the bridge gateway address of
#     the stack's `public` network. Only when SANDGATE_PUBLISH is a loopback
#     address: nothing but this host can then reach the port.
#   - tenant "ragflow": with SANDGATE_RAGFLOW_NETWORK=<RAGFlow's compose
#     network>, the gateway joins it (docker-compose.ragflow.yml) as
#     sandbox-executor-manager, and the tenant is bound to its subnet(s).
# Both are weaker than tokens: anything that can send from there is that
# tenant (README, "RAGFlow integration").
#
# Dify: with SANDGATE_DIFY_NETWORK=<the network of Dify's sandbox service>,
# the gateway's Dify listener is on (port 8194) and the gateway joins that
# network as `sandbox` (docker-compose.dify.yml); the tenant "dify" (policy
# "dify") gets the key Dify sends as X-Api-Key: SANDGATE_DIFY_API_KEY, else
# one made once into $SANDGATE_STACK_DIR/config/dify.key (README, "Dify
# integration").
set -euo pipefail
cd "$(dirname "$0")/.."

# SANDGATE_PROJECT lets a second stack (the stack test suite) run beside the
# default one: its own compose project and its own sandbox container labels.
PROJECT=${SANDGATE_PROJECT:-sandgate}
export SANDGATE_INSTANCE_PREFIX=${PROJECT}-stack
# The networked sandboxes' internal network (README, "Network"), one per project.
export SANDGATE_EGRESS_NETWORK=${SANDGATE_EGRESS_NETWORK:-${PROJECT}-egress}
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
# where the port is published; a bare port is every interface (not loopback)
PUBLISH_HOST=$HOST
[ "$HOST" = "$PUBLISH" ] && PUBLISH_HOST=0.0.0.0 && HOST=127.0.0.1
[ "$HOST" = 0.0.0.0 ] && HOST=127.0.0.1
export SANDGATE_STACK_DIR=$STACK_DIR
# The package set images `make images` built for the sandbox images' tag
# (images/build-sets.py): the executors' pools (SANDGATE_SETS), unless the
# environment or .env says.
SANDBOX_TAG=$(setting SANDBOX_BASE_PYTHON_IMAGE sandgate/sandbox-python:latest)
SETS_ENV=build/sets/executors-${SANDBOX_TAG##*:}.env
for lang in PYTHON NODEJS; do
    v=$(setting "SANDGATE_SETS_$lang" "")
    if [ -z "$v" ] && [ -f "$SETS_ENV" ]; then
        v=$(sed -n "s/^SANDGATE_SETS_$lang=//p" "$SETS_ENV" | tail -1)
        for image in $v; do # built for another tag since: the built-in flavours
            docker image inspect "$image" >/dev/null 2>&1 || { v=""; break; }
        done
    fi
    export "SANDGATE_SETS_$lang=$v"
done
RAGFLOW_NETWORK=$(setting SANDGATE_RAGFLOW_NETWORK "")
COMPOSE_FILES=(-f docker-compose.yml)
if [ -n "$RAGFLOW_NETWORK" ]; then
    export SANDGATE_RAGFLOW_NETWORK=$RAGFLOW_NETWORK
    COMPOSE_FILES+=(-f docker-compose.ragflow.yml)
fi
DIFY_NETWORK=$(setting SANDGATE_DIFY_NETWORK "")
if [ -n "$DIFY_NETWORK" ]; then
    export SANDGATE_DIFY_NETWORK=$DIFY_NETWORK
    COMPOSE_FILES+=(-f docker-compose.dify.yml)
fi

compose() {
    if docker compose version >/dev/null 2>&1; then
        docker compose -p "$PROJECT" "${COMPOSE_FILES[@]}" "$@"
    elif command -v docker-compose >/dev/null; then
        docker-compose -p "$PROJECT" "${COMPOSE_FILES[@]}" "$@"
    else
        die "neither 'docker compose' nor docker-compose is installed ('make deps' installs it)"
    fi
}

new_secret() { head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n'; }

# The key Dify sends (CODE_EXECUTION_API_KEY): SANDGATE_DIFY_API_KEY, else
# one made once. A tenant token: 16 to 256 characters.
dify_key() {
    [ -n "$DIFY_NETWORK" ] || return 0
    docker network inspect "$DIFY_NETWORK" >/dev/null 2>&1 ||
        die "SANDGATE_DIFY_NETWORK=$DIFY_NETWORK: no such network (start Dify first; docker network ls | grep ssrf_proxy)"
    local file="$STACK_DIR/config/dify.key" key
    key=$(setting SANDGATE_DIFY_API_KEY "")
    if [ -n "$key" ]; then
        [ ${#key} -ge 16 ] || die "SANDGATE_DIFY_API_KEY: at least 16 characters (it is a tenant token)"
        printf '%s' "$key" >"$file"
    elif [ ! -s "$file" ]; then
        new_secret >"$file"
        say "new Dify key in $file: set Dify's CODE_EXECUTION_API_KEY to it"
    fi
    chmod 0640 "$file"
    [ "$(id -u)" = 0 ] && chown "0:$DAEMON_UID" "$file"
    say "Dify network $DIFY_NETWORK: the gateway is http://sandbox:8194 there (key: $file)"
}

# Files the daemons read (uid 10001) but nobody else: root:10001, 0640.
prepare() {
    local cfg="$STACK_DIR/config" audit="$STACK_DIR/audit"
    mkdir -p "$cfg" "$audit"
    if [ ! -s "$cfg/client.token" ]; then
        new_secret >"$cfg/client.token"
        say "new client token in $cfg/client.token"
    fi
    if [ ! -s "$cfg/tokens.json" ]; then
        # the operator's own tenant: "admin" reads every tenant's audit (the console)
        printf '{"tenants": {"default": {"tokens": ["%s"], "admin": true}}}\n' \
            "$(cat "$cfg/client.token")" >"$cfg/tokens.json"
        say "new tokens file $cfg/tokens.json (tenant \"default\", admin)"
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
    # The runsc dockerd runs, mounted read-only into the executors, which read
    # its version at start (README, "gVisor").
    local rt
    rt=$(setting SANDGATE_RUNTIME runsc)
    SANDGATE_RUNSC_HOST_PATH=$(docker info --format "{{with index .Runtimes \"$rt\"}}{{.Path}}{{end}}" 2>/dev/null)
    [ -n "$SANDGATE_RUNSC_HOST_PATH" ] || die "runtime $rt is not registered with dockerd ('images/host-setup.sh --fix')"
    export SANDGATE_RUNSC_HOST_PATH
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

# One docker network inspect template over every IPAM entry of a network.
network_field() {
    docker network inspect -f "{{range .IPAM.Config}}{{$2}} {{end}}" "$1" 2>/dev/null
}

is_loopback() {
    case $1 in 127.*|localhost|::1|\[::1\]) return 0 ;; *) return 1 ;; esac
}

# Write the trusted networks (see the header) into the tokens file; prints
# "changed" when the file changed.
bind_networks() {
    local tokens="$STACK_DIR/config/tokens.json" public host_addr="" ragflow_nets=""
    public=$(docker network ls -q --filter "label=com.docker.compose.project=$PROJECT" \
        --filter "label=com.docker.compose.network=public" | head -1)
    [ -n "$public" ] || die "the stack's public network was not created"
    if is_loopback "$PUBLISH_HOST"; then
        host_addr=$(network_field "$public" .Gateway | awk '{print $1}')
        [ -n "$host_addr" ] || die "docker network inspect shows no gateway address for $public"
        say "host requests to $HOST:$PORT arrive from $host_addr: tenant \"default\" needs no token from there" >&2
    else
        say "SANDGATE_PUBLISH=$PUBLISH is not loopback: tenant \"default\" needs its token" >&2
    fi
    if [ -n "$RAGFLOW_NETWORK" ]; then
        ragflow_nets=$(network_field "$RAGFLOW_NETWORK" .Subnet | xargs)
        [ -n "$ragflow_nets" ] || die "network $RAGFLOW_NETWORK has no subnet"
        say "RAGFlow network $RAGFLOW_NETWORK ($ragflow_nets): tenant \"ragflow\" needs no token from there" >&2
    fi
    local dify_key=""
    [ -n "$DIFY_NETWORK" ] && dify_key=$(cat "$STACK_DIR/config/dify.key")
    python3 - "$tokens" "$host_addr" "$ragflow_nets" "$dify_key" <<'PY'
import json, os, sys
path, host_addr, ragflow_nets, dify_key = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4]
with open(path) as f:
    before = f.read()
doc = json.loads(before)
tenants = doc["tenants"]
def bind(name, nets, create):
    t = tenants.get(name)
    if t is None and nets and create:
        t = tenants[name] = {}
    if t is None:
        return
    if nets:
        t["networks"] = nets
    else:
        t.pop("networks", None)
        if not t.get("tokens") and not t.get("token_sha256"):
            del tenants[name]  # it was a network-only tenant: nothing identifies it now
bind("default", [host_addr + ("/128" if ":" in host_addr else "/32")] if host_addr else [], False)
bind("ragflow", ragflow_nets, True)
if dify_key:  # Dify's X-Api-Key is this tenant's token; its jobs use the dify policy
    t = tenants.setdefault("dify", {})
    t["tokens"] = [dify_key]
    t.setdefault("policies", ["dify"])
after = json.dumps(doc, indent=2) + "\n"
if after != before:
    st = os.stat(path)
    with open(path + ".tmp", "w") as f:
        f.write(after)
    os.chown(path + ".tmp", st.st_uid, st.st_gid)
    os.chmod(path + ".tmp", st.st_mode & 0o7777)
    os.replace(path + ".tmp", path)
    print("changed")
PY
}

token_hint() {
    if is_loopback "$PUBLISH_HOST"; then
        echo "Try it (this host needs no token; elsewhere send the one in $1):"
    else
        echo "Try it (SANDGATE_PUBLISH is not loopback: every request needs a token):"
    fi
}

# A /24 for the egress network that overlaps no Docker network and no host
# route (the proxy's address in it is fixed, so the executors know it without
# a resolver). The candidates lie in 10.254.0.0/16, outside Docker's default
# address pools (172.17-31.0.0/16, 192.168.0.0/16): a network Docker numbers
# itself, in this project or another, can never take the /24 from under us.
ip4_int() {
    local IFS=. a b c d
    read -r a b c d <<<"$1"
    echo $(((a << 24) | (b << 16) | (c << 8) | d))
}
# 0 when the IPv4 networks $1 and $2 (a.b.c.d/len) share an address
cidr_overlap() {
    local n1=${1%/*} l1=${1#*/} n2=${2%/*} l2=${2#*/}
    [ "$l1" = "$1" ] && l1=32
    [ "$l2" = "$2" ] && l2=32
    local l=$((l1 < l2 ? l1 : l2))
    local mask=$(((0xffffffff << (32 - l)) & 0xffffffff))
    [ $(($(ip4_int "$n1") & mask)) -eq $(($(ip4_int "$n2") & mask)) ]
}
egress_subnet() {
    [ -n "${SANDGATE_EGRESS_SUBNET:-}" ] && return 0
    if docker network inspect "$SANDGATE_EGRESS_NETWORK" >/dev/null 2>&1; then
        SANDGATE_EGRESS_SUBNET=$(network_field "$SANDGATE_EGRESS_NETWORK" .Subnet | awk '{print $1}')
    else
        local used x u clash
        used=$( (docker network ls -q | xargs -r docker network inspect -f \
            '{{range .IPAM.Config}}{{.Subnet}} {{end}}' 2>/dev/null
            ip -4 route show 2>/dev/null | awk '$1 != "default" {print $1}') |
            tr ' ' '\n' | grep -E '^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+(/[0-9]+)?$')
        for x in $(seq 253 -1 200); do
            clash=
            for u in $used; do
                cidr_overlap "10.254.$x.0/24" "$u" && { clash=1; break; }
            done
            [ -z "$clash" ] && { SANDGATE_EGRESS_SUBNET=10.254.$x.0/24; break; }
        done
    fi
    [ -n "${SANDGATE_EGRESS_SUBNET:-}" ] || die "no free 10.254.x.0/24 for the egress network: set SANDGATE_EGRESS_SUBNET and SANDGATE_EGRESS_PROXY_IP"
    export SANDGATE_EGRESS_SUBNET
    export SANDGATE_EGRESS_PROXY_IP=${SANDGATE_EGRESS_PROXY_IP:-${SANDGATE_EGRESS_SUBNET%.0/24}.2}
}

# The gateway's and executors' networks, which the egress proxy refuses
# unless a job's list names a host there exactly.
write_egress_block() {
    local kind id
    for kind in public internal; do
        id=$(docker network ls -q --filter "label=com.docker.compose.project=$PROJECT" \
            --filter "label=com.docker.compose.network=$kind" | head -1)
        [ -n "$id" ] && network_field "$id" .Subnet
    done | xargs -n1 >"$STACK_DIR/config/egress-block.tmp"
    mv "$STACK_DIR/config/egress-block.tmp" "$STACK_DIR/config/egress-block"
}

# The egress network's host packet filter (images/egress-firewall.sh). Without
# root the stack still starts, networked jobs then rest on the proxy settings
# alone: said loudly.
egress_firewall() {
    if [ "$(id -u)" != 0 ]; then
        say "WARNING: not root: skipped the egress packet filter's $1; a networked job's own socket can reach this host (README, \"Network\"). Run 'images/egress-firewall.sh $*' as root." >&2
        return 0
    fi
    images/egress-firewall.sh "$@" >&2 || die "images/egress-firewall.sh $* failed"
}

up() {
    prepare
    egress_subnet
    if [ -n "$RAGFLOW_NETWORK" ] && ! docker network inspect "$RAGFLOW_NETWORK" >/dev/null 2>&1; then
        die "SANDGATE_RAGFLOW_NETWORK=$RAGFLOW_NETWORK: no such network (start RAGFlow first; docker network ls | grep ragflow)"
    fi
    dify_key
    say "starting the stack (project $PROJECT)"
    # Create first: the public network's addresses exist only then.
    compose up --no-start --remove-orphans
    local changed
    changed=$(bind_networks)
    write_egress_block
    egress_firewall install "$SANDGATE_EGRESS_NETWORK" "$SANDGATE_EGRESS_PROXY_IP:3128"
    compose up -d --remove-orphans
    if [ "$changed" = changed ]; then
        # A gateway that was already running reloads the tokens file.
        compose kill -s HUP gateway >/dev/null 2>&1 || true
    fi
    wait_ready
    local token_file="$STACK_DIR/config/client.token"
    cat <<EOT

sandgate is up on http://$HOST:$PORT  (audit log: $STACK_DIR/audit/audit.log)
$(token_hint "$token_file")
  curl -s http://$HOST:$PORT/run \\$(is_loopback "$PUBLISH_HOST" || printf '\n    -H "Authorization: Bearer $(cat %s)" \\' "$token_file")
    -H 'Content-Type: application/json' \\
    -d '{"language": "python", "arguments": {"name": "world"},
         "code_b64": "'\$(printf 'def main(name):\\n    return {"hello": name}\\n' | base64 -w0)'"}'
Console: http://$HOST:$PORT/console/  (sign in with the token in $token_file)
More: make demo    Stop: make down
EOT
}

down() {
    export DOCKER_GID=${DOCKER_GID:-0}
    export SANDGATE_EGRESS_SUBNET=${SANDGATE_EGRESS_SUBNET:-10.254.253.0/24}
    say "stopping the stack (project $PROJECT)"
    docker network inspect "$SANDGATE_EGRESS_NETWORK" >/dev/null 2>&1 &&
        egress_firewall remove "$SANDGATE_EGRESS_NETWORK"
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
    reload) export DOCKER_GID=${DOCKER_GID:-0} SANDGATE_EGRESS_SUBNET=${SANDGATE_EGRESS_SUBNET:-10.254.253.0/24}; compose exec -T gateway /usr/local/bin/sandgate-reload ;;
    status) export DOCKER_GID=${DOCKER_GID:-0} SANDGATE_EGRESS_SUBNET=${SANDGATE_EGRESS_SUBNET:-10.254.253.0/24}; compose ps ;;
    *) echo "usage: stack.sh up|down|wait|reload|status" >&2; exit 2 ;;
esac
