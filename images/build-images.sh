#!/usr/bin/env bash
# build-images.sh [NAME...]
#
# Builds sandgate's Docker images (all of them, or the named ones: python, egress,
# nodejs, gateway, executor). `make images` runs this.
#   1. host check: images/host-setup.sh --fix as root, --check otherwise
#   2. base image: $SANDGATE_BASE_IMAGE if set; else debian:bookworm-slim if
#      present; else sandgate/base:bookworm if already built; else pull
#      debian:bookworm-slim; else build sandgate/base:bookworm offline with
#      images/base/make-base.sh (once: later runs reuse it)
#   3. docker build of each image with --build-arg BASE_IMAGE=<base> (and
#      SANDGATE_PREIMPORT=$SANDGATE_PYTHON_PREIMPORT for python); the Docker
#      layer cache makes a second run fast (no --no-cache here)
#
# Extending the sandbox images (each also read from .env):
#   SANDGATE_PYTHON_PACKAGES="python3-scipy python3-tabulate"
#       extra Debian packages for the Python image (apt, from the mirror)
#   SANDGATE_NODE_PACKAGES="lodash@4.17.21"
#       extra npm packages for the Node image, each pinned to an exact version.
#       Each tarball is fetched here with npm pack and must match its sha512
#       in images/nodejs/packages.lock ($SANDGATE_NODE_LOCK); a package
#       missing there stops the build, unless SANDGATE_NODE_LOCK_UPDATE=1
#       records it (review the diff). Dependencies are not resolved: every
#       package a listed one depends on must be listed too.
# A package in an image is not importable by jobs until a policy allows it
# (policies/README.md, "Extending the images").
#   4. package sets: images/build-sets.py builds one image per set declared in
#      flavours/ (SANDGATE_FLAVOURS_DIR) on top of the python/nodejs image just
#      built: sandgate/set-LANGUAGE-NAME:$TAG (docs/images.md, "Adding packages")
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
    [egress]="images/egress/Dockerfile ."
)
declare -A TAGS=(
    [python]=sandgate/sandbox-python [nodejs]=sandgate/sandbox-nodejs
    [gateway]=sandgate/gateway [executor]=sandgate/executor
    [egress]=sandgate/egress
)
ORDER=(python nodejs gateway executor egress)

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
    if [ "$name" = gateway ]; then # the console's page, bundled on the host (npm)
        make --no-print-directory console >/dev/null || die "make console failed"
    fi
    say "building ${TAGS[$name]}:$TAG (base $base)"
    started=$(date +%s)
    local args=(--build-arg BASE_IMAGE="$base")
    if [ "$name" = python ]; then
        args+=(--build-arg SANDGATE_PREIMPORT="${SANDGATE_PYTHON_PREIMPORT:-}")
        args+=(--build-arg SANDGATE_EXTRA_PACKAGES="$PYTHON_EXTRA")
    fi
    docker build "${args[@]}" -f "$dockerfile" \
        -t "${TAGS[$name]}:$TAG" "$context" 2>&1 | sed -u "s/^/  [$name] /"
    [ "${PIPESTATUS[0]}" = 0 ] || die "docker build of ${TAGS[$name]} failed"
    say "built ${TAGS[$name]}:$TAG in $(( $(date +%s) - started )) s"
}

MAX_EXTRA_PACKAGES=64
NODE_LOCK=${SANDGATE_NODE_LOCK:-images/nodejs/packages.lock}
NODE_BASE=images/nodejs/packages.base # always in the image (axios; undici for the runner)
NODE_BASE_LOCK=images/nodejs/packages.lock
NPM_DIR=build/npm-packages
PYTHON_EXTRA=""

# SANDGATE_PYTHON_PACKAGES, checked: Debian package names (optionally =version).
python_packages() {
    local p n=0
    for p in ${SANDGATE_PYTHON_PACKAGES:-}; do
        [[ $p =~ ^[a-z0-9][a-z0-9+.-]+(=[A-Za-z0-9.+:~-]+)?$ ]] ||
            die "SANDGATE_PYTHON_PACKAGES: '$p' is not a Debian package name"
        n=$((n + 1))
    done
    [ $n -le $MAX_EXTRA_PACKAGES ] || die "SANDGATE_PYTHON_PACKAGES: more than $MAX_EXTRA_PACKAGES"
    echo "${SANDGATE_PYTHON_PACKAGES:-}" | xargs
}

# The integrity recorded for name@version in the lock file (empty if none).
locked_integrity() { # spec lock-file
    [ -f "$2" ] || return 0
    awk -v k="$1" '$1 == k { print $2 }' "$2" | tail -1
}

# Fetch, verify and stage one pinned npm package; prints its dependencies.
stage_npm() { # spec [lock-file, default $NODE_LOCK]
    local spec=$1 lock=${2:-$NODE_LOCK} tmp tgz actual want
    tmp=$(mktemp -d)
    ( cd "$tmp" && npm pack --silent "$spec" >/dev/null 2>npm.err ) || {
        cat "$tmp/npm.err" >&2; rm -rf "$tmp"; die "npm pack $spec failed"; }
    tgz=$(find "$tmp" -name '*.tgz' | head -1)
    [ -n "$tgz" ] || die "npm pack $spec produced no tarball"
    actual="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
    want=$(locked_integrity "$spec" "$lock")
    if [ -z "$want" ] && [ "${SANDGATE_NODE_LOCK_UPDATE:-}" = 1 ]; then
        echo "$spec $actual" >>"$lock"
        say "recorded $spec $actual in $lock" >&2
        want=$actual
    fi
    [ -n "$want" ] || die "$spec is not in $lock: review the package, then run again with SANDGATE_NODE_LOCK_UPDATE=1 to record its integrity"
    [ "$actual" = "$want" ] || die "integrity mismatch for $spec: $lock has $want, the registry served $actual"
    mv "$tgz" "$NPM_DIR/"
    echo "${spec%@*} $(basename "$tgz")" >>"$NPM_DIR/packages.txt"
    tar -xzOf "$NPM_DIR/$(basename "$tgz")" package/package.json |
        python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin).get("dependencies") or {}))'
    rm -rf "$tmp"
}

# SANDGATE_NODE_PACKAGES -> build/npm-packages (always created: the Node
# Dockerfile copies it, empty when there are no extras).
node_packages() {
    local spec deps d names=() n=0 base
    rm -rf "$NPM_DIR" && mkdir -p "$NPM_DIR" && : >"$NPM_DIR/packages.txt"
    base=$(grep -v '^#' "$NODE_BASE" | xargs)
    for spec in $base; do names+=("${spec%@*}"); done
    for spec in ${SANDGATE_NODE_PACKAGES:-}; do
        [[ $spec =~ ^(@[a-z0-9._-]+/)?[a-z0-9._-]+@[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]] ||
            die "SANDGATE_NODE_PACKAGES: '$spec' is not name@exact-version (e.g. lodash@4.17.21)"
        names+=("${spec%@*}")
        n=$((n + 1))
    done
    [ $n -le $MAX_EXTRA_PACKAGES ] || die "SANDGATE_NODE_PACKAGES: more than $MAX_EXTRA_PACKAGES"
    for spec in $base; do # the project's own, always checked against its own lock
        stage_npm "$spec" "$NODE_BASE_LOCK" >/dev/null
    done
    for spec in ${SANDGATE_NODE_PACKAGES:-}; do
        deps=$(stage_npm "$spec")
        for d in $deps; do
            [[ " ${names[*]} " == *" $d "* ]] ||
                die "$spec depends on $d: add a pinned $d@<version> to SANDGATE_NODE_PACKAGES"
        done
        say "npm package $spec verified"
    done
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
    env_default SANDGATE_PYTHON_PACKAGES
    env_default SANDGATE_NODE_PACKAGES
    env_default SANDGATE_FLAVOURS_DIR
    env_default SANDGATE_WHEELHOUSE
    [ ${#names[@]} -gt 0 ] || names=("${ORDER[@]}")
    for name in "${names[@]}"; do
        [ -n "${SPEC[$name]:-}" ] || die "unknown image '$name' (known: ${ORDER[*]})"
    done
    # Extras and package sets are checked (npm tarballs and wheels verified
    # against their pins) before anything is built.
    local langs=()
    for name in "${names[@]}"; do
        if [ "$name" = python ]; then PYTHON_EXTRA=$(python_packages); fi
        if [ "$name" = nodejs ]; then node_packages; fi
        if [ "$name" = python ] || [ "$name" = nodejs ]; then langs+=(--language "$name"); fi
    done
    if [ ${#langs[@]} -gt 0 ]; then
        python3 images/build-sets.py --tag "$TAG" "${langs[@]}" --check || die "package sets"
    fi
    host_check || die "the host is not ready (see above)"
    base=$(choose_base)
    say "base image: $base"
    for name in "${names[@]}"; do
        build_one "$name" "$base"
    done
    # One image per package set of flavours/ on top of its language's image
    # (docs/images.md, "Adding packages").
    if [ ${#langs[@]} -gt 0 ]; then
        python3 images/build-sets.py --tag "$TAG" "${langs[@]}" || die "package sets"
    fi
}

main "$@"
