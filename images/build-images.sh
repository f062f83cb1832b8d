#!/usr/bin/env bash
# build-images.sh [NAME...]
#
# Builds sandgate's Docker images (all of them, or the named ones: python,
# nodejs, gateway, executor). `make images` runs this.
#   1. host check: images/host-setup.sh --fix as root, --check otherwise
#   2. base image: $SANDGATE_BASE_IMAGE if set; else debian:bookworm-slim if
#      present; else sandgate/base:bookworm if already built; else pull
#      debian:bookworm-slim; else build sandgate/base:bookworm offline with
#      images/base/make-base.sh (once: later runs reuse it)
#   3. docker build of each image with --build-arg BASE_IMAGE=<base> (and
#      SANDGATE_PREIMPORT=$SANDGATE_PYTHON_PREIMPORT for python); the Docker
#      layer cache makes a second run fast (no --no-cache here)
set -euo pipefail
cd "$(dirname "$0")/.."

TAG=${SANDGATE_TAG:-latest}
OFFLINE_BASE=sandgate/base:bookworm
SLIM_BASE=debian:bookworm-slim

say() { echo "images: $*"; }
die() { echo "images: error: $*" >&2; exit 1; }
have_image() { docker image inspect "$1" >/dev/null 2>&1; }

# image name -> "dockerfile context"
declare -A SPEC=(
    [python]="images/python/Dockerfile ."
    [nodejs]="images/nodejs/Dockerfile ."
    [gateway]="images/gateway/Dockerfile ."
    [executor]="images/executor/Dockerfile ."
)
declare -A TAGS=(
    [python]=sandgate/sandbox-python [nodejs]=sandgate/sandbox-nodejs
    [gateway]=sandgate/gateway [executor]=sandgate/executor
)
ORDER=(python nodejs gateway executor)

host_check() {
    if [ "$(id -u)" = 0 ]; then
        images/host-setup.sh --fix
    else
        images/host-setup.sh --check
    fi
}

choose_base() {
    if [ -n "${SANDGATE_BASE_IMAGE:-}" ]; then
        have_image "$SANDGATE_BASE_IMAGE" || docker pull "$SANDGATE_BASE_IMAGE" >&2 ||
            die "base image $SANDGATE_BASE_IMAGE is neither present nor pullable"
        echo "$SANDGATE_BASE_IMAGE"
    elif have_image "$SLIM_BASE"; then
        echo "$SLIM_BASE"
    elif have_image "$OFFLINE_BASE"; then
        echo "$OFFLINE_BASE"
    elif docker pull -q "$SLIM_BASE" >/dev/null 2>&1; then
        echo "$SLIM_BASE"
    else
        say "no registry: building $OFFLINE_BASE offline (once)" >&2
        images/base/make-base.sh "$OFFLINE_BASE" >&2 || die "offline base image failed"
        echo "$OFFLINE_BASE"
    fi
}

build_one() {
    local name=$1 base=$2 dockerfile context started
    read -r dockerfile context <<<"${SPEC[$name]}"
    [ -f "$dockerfile" ] || die "$dockerfile is missing"
    if [ "$name" = gateway ] || [ "$name" = executor ]; then
        # The daemons compile the grammars the host fetched and verified.
        make --no-print-directory grammars >/dev/null || die "make grammars failed"
    fi
    say "building ${TAGS[$name]}:$TAG (base $base)"
    started=$(date +%s)
    local args=(--build-arg BASE_IMAGE="$base")
    [ "$name" = python ] && args+=(--build-arg SANDGATE_PREIMPORT="${SANDGATE_PYTHON_PREIMPORT:-}")
    docker build "${args[@]}" -f "$dockerfile" \
        -t "${TAGS[$name]}:$TAG" "$context" 2>&1 | sed -u "s/^/  [$name] /"
    [ "${PIPESTATUS[0]}" = 0 ] || die "docker build of ${TAGS[$name]} failed"
    say "built ${TAGS[$name]}:$TAG in $(( $(date +%s) - started )) s"
}

# SANDGATE_PYTHON_PREIMPORT may be set in .env, like the stack's settings.
env_default() {
    local name=$1
    [ -n "${!name:-}" ] || [ ! -f .env ] && return 0
    local line
    line=$(grep -E "^${name}=" .env | tail -1) || return 0
    export "$name=${line#*=}"
}

main() {
    local names=("$@") base name
    env_default SANDGATE_PYTHON_PREIMPORT
    [ ${#names[@]} -gt 0 ] || names=("${ORDER[@]}")
    for name in "${names[@]}"; do
        [ -n "${SPEC[$name]:-}" ] || die "unknown image '$name' (known: ${ORDER[*]})"
    done
    host_check || die "the host is not ready (see above)"
    base=$(choose_base)
    say "base image: $base"
    for name in "${names[@]}"; do
        build_one "$name" "$base"
    done
}

main "$@"
