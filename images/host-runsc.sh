# host-runsc.sh - sourced by host-setup.sh: a current gVisor and its platform.
#
# fix_runsc       install runsc >= RUNSC_MIN_DATE when it is missing or older:
#                 on Debian bookworm from bookworm-backports (the suite is
#                 added to the apt sources with the URI and keyring of the
#                 machine's own bookworm source when no source has it), at the
#                 pinned version RUNSC_PIN; apt checks the signatures as usual
# choose_platform the gVisor platform, by probe: kvm (only when the KVM device
#                 answers its API-version ioctl), then systrap, then ptrace;
#                 each probe is a `runsc do` sandbox that must print its token
#                 within RUNSC_PROBE_S seconds (kvm hung on some hosts). The
#                 first that answers is RUNSC_PLATFORM_CHOSEN. The choice
#                 recorded for the installed runsc version is reused (no
#                 probe on every `make up`; a new runsc is probed again).
#                 SANDGATE_RUNSC_PLATFORM (environment or .env) forces one:
#                 it is still probed, and a failure is a problem, not a
#                 silent fallback.
# record_runsc    writes version, platform and path to $SANDGATE_STATE_DIR/runsc
# check_runsc_version  a problem when the installed runsc is older than
#                 RUNSC_MIN_DATE (the executor refuses it too: README, "gVisor")
#
# Test hooks: SANDGATE_RUNSC (the binary), SANDGATE_APT_DIR (/etc/apt),
# SANDGATE_KVM_DEVICE (/dev/kvm), SANDGATE_RUNSC_PROBE_S, SANDGATE_STATE_DIR,
# SANDGATE_APT_GET (apt-get), SANDGATE_OS_RELEASE (/etc/os-release).

# The oldest runsc sandgate runs on (its date; executors/runsc_info.h has the
# same number) and the version installed on bookworm.
RUNSC_MIN_DATE=20240729
RUNSC_PIN=${SANDGATE_RUNSC_PIN:-0.0~20240729*}
RUNSC_PROBE_S=${SANDGATE_RUNSC_PROBE_S:-15}
RUNSC_PLATFORMS="kvm systrap ptrace"
APT_DIR=${SANDGATE_APT_DIR:-/etc/apt}
APT_GET=${SANDGATE_APT_GET:-apt-get}
KVM_DEVICE=${SANDGATE_KVM_DEVICE:-/dev/kvm}
STATE_DIR=${SANDGATE_STATE_DIR:-/var/lib/sandgate}
OS_RELEASE=${SANDGATE_OS_RELEASE:-/etc/os-release}
RUNSC_PLATFORM_CHOSEN=

runsc_bin() {
    if [ -n "${SANDGATE_RUNSC:-}" ]; then echo "$SANDGATE_RUNSC"; else command -v runsc; fi
}

# The date in `runsc --version` ("runsc version 0.0~20240729.0",
# "runsc version release-20240729.0"), or nothing.
runsc_date() {
    local bin
    bin=$(runsc_bin) || return 1
    timeout 10 "$bin" --version 2>/dev/null | head -1 | grep -oE '20[0-9]{6}' | head -1
}

runsc_version() {
    local bin
    bin=$(runsc_bin) || return 1
    timeout 10 "$bin" --version 2>/dev/null | head -1 | sed -n 's/^runsc version //p'
}

# A setting from the environment, else the repository's .env.
host_setting() {
    local name=$1 line env_file
    env_file="$(dirname "${BASH_SOURCE[0]}")/../.env"
    if [ -n "${!name:-}" ]; then echo "${!name}"; return; fi
    if [ -f "$env_file" ] && line=$(grep -E "^${name}=" "$env_file" | tail -1); then
        echo "${line#*=}"
    fi
}

os_codename() {
    # shellcheck disable=SC1090
    (. "$OS_RELEASE" 2>/dev/null && echo "${VERSION_CODENAME:-}")
}

# Every apt source as "URI SUITE SIGNED-BY" lines (one-line and deb822 forms;
# deb-src and disabled entries skipped).
apt_sources() {
    python3 - "$APT_DIR" <<'PY'
import glob, os, sys
d = sys.argv[1]
files = [os.path.join(d, "sources.list")] + sorted(glob.glob(os.path.join(d, "sources.list.d", "*.list")))
for f in files:
    try:
        lines = open(f).read().splitlines()
    except OSError:
        continue
    for line in lines:
        w = line.split("#")[0].split()
        if not w or w[0] != "deb":
            continue
        w, key = w[1:], "-"
        if w and w[0].startswith("["):
            opts = []
            while w:
                opts.append(w.pop(0))
                if opts[-1].endswith("]"):
                    break
            for o in " ".join(opts).strip("[]").split():
                if o.startswith("signed-by="):
                    key = o.split("=", 1)[1]
        if len(w) >= 2:
            print(w[0], w[1], key)
for f in sorted(glob.glob(os.path.join(d, "sources.list.d", "*.sources"))):
    try:
        text = open(f).read()
    except OSError:
        continue
    for block in text.split("\n\n"):
        fields, last = {}, None
        for line in block.splitlines():
            if line.startswith("#") or not line.strip():
                continue
            if line[0] in " \t" and last:
                fields[last] += " " + line.strip()
                continue
            k, _, v = line.partition(":")
            last = k.strip().lower()
            fields[last] = v.strip()
        if "deb" not in fields.get("types", "").split() or fields.get("enabled", "yes") == "no":
            continue
        for uri in fields.get("uris", "").split():
            for suite in fields.get("suites", "").split():
                print(uri, suite, fields.get("signed-by", "-").split()[0] if fields.get("signed-by") else "-")
PY
}

# Add <codename>-backports with the URI (and keyring) of the machine's own
# <codename> source; nothing when a source has the suite already.
fix_backports() {
    local codename=$1 uri key file
    apt_sources | awk -v s="$codename-backports" '$2 == s {found=1} END {exit !found}' && return 0
    read -r uri key < <(apt_sources | awk -v s="$codename" '$2 == s {print $1, $3; exit}')
    if [ -z "${uri:-}" ]; then
        problem "no apt source for Debian $codename to take the mirror from; add $codename-backports to the apt sources by hand"
        return 1
    fi
    file="$APT_DIR/sources.list.d/sandgate-backports.sources"
    {
        echo "Types: deb"
        echo "URIs: $uri"
        echo "Suites: $codename-backports"
        echo "Components: main"
        [ "$key" != "-" ] && echo "Signed-By: $key"
    } >"$file"
    say "added $codename-backports ($uri) to the apt sources: $file"
}

fix_runsc() {
    local date codename
    date=$(runsc_date)
    [ -n "$date" ] && [ "$date" -ge "$RUNSC_MIN_DATE" ] && return 0
    codename=$(os_codename)
    export DEBIAN_FRONTEND=noninteractive
    if [ "$codename" = bookworm ]; then
        fix_backports "$codename" || return 1
        say "installing runsc $RUNSC_PIN from $codename-backports (apt; was: ${date:-none})"
        "$APT_GET" update -qq >/dev/null &&
            "$APT_GET" install -y -qq "runsc=$RUNSC_PIN" >/dev/null ||
            { problem "apt-get install runsc=$RUNSC_PIN failed"; return 1; }
    else
        say "installing runsc (apt; was: ${date:-none})"
        "$APT_GET" update -qq >/dev/null && "$APT_GET" install -y -qq runsc >/dev/null ||
            { problem "apt-get install runsc failed"; return 1; }
    fi
    date=$(runsc_date)
    if [ -z "$date" ] || [ "$date" -lt "$RUNSC_MIN_DATE" ]; then
        problem "runsc ${date:-(no version)} is older than the minimum $RUNSC_MIN_DATE after the install"
        return 1
    fi
}

# The KVM device exists, opens read-write and answers KVM_GET_API_VERSION.
kvm_works() {
    [ -e "$KVM_DEVICE" ] || return 1
    timeout 5 python3 - "$KVM_DEVICE" <<'PY' >/dev/null 2>&1
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
sys.exit(0 if fcntl.ioctl(fd, 0xAE00) == 12 else 1)  # KVM_GET_API_VERSION
PY
}

# One bounded sandbox on platform $1; 0 when it printed its token in time.
probe_platform() {
    local p=$1 bin root out rc id token="sandgate-probe-$$-$RANDOM"
    bin=$(runsc_bin) || return 1
    root=$(mktemp -d /tmp/sg-runsc-probe.XXXXXX)
    out=$(timeout -k 2 "$RUNSC_PROBE_S" "$bin" --root="$root" --platform="$p" --network=none \
        do /bin/echo "$token" 2>&1)
    rc=$?
    # a probe that hung leaves its sandbox in this root: take it down
    for id in $("$bin" --root="$root" list -quiet 2>/dev/null); do
        timeout 10 "$bin" --root="$root" delete -force "$id" >/dev/null 2>&1
    done
    rm -rf "$root"
    [ $rc = 0 ] && grep -qx "$token" <<<"$out" && return 0
    [ $rc = 124 ] && say "platform $p: no answer within ${RUNSC_PROBE_S}s" ||
        say "platform $p: failed (exit $rc): $(tail -c 200 <<<"$out" | tr '\n' ' ')"
    return 1
}

choose_platform() {
    local forced p
    forced=$(host_setting SANDGATE_RUNSC_PLATFORM)
    if [ -n "$forced" ]; then
        case " $RUNSC_PLATFORMS " in *" $forced "*) ;; *)
            problem "SANDGATE_RUNSC_PLATFORM=$forced: not one of $RUNSC_PLATFORMS"; return 1 ;;
        esac
        if ! probe_platform "$forced"; then
            problem "the forced platform $forced (SANDGATE_RUNSC_PLATFORM) does not start a sandbox here"
            return 1
        fi
        RUNSC_PLATFORM_CHOSEN=$forced
        say "platform $forced (forced by SANDGATE_RUNSC_PLATFORM)"
        return 0
    fi
    # probed before for this very runsc: keep its choice (a new runsc probes again)
    if [ -f "$STATE_DIR/runsc" ] &&
        grep -qxF "version=$(runsc_version)" "$STATE_DIR/runsc" &&
        p=$(sed -n 's/^platform=\(kvm\|systrap\|ptrace\)$/\1/p' "$STATE_DIR/runsc") && [ -n "$p" ]; then
        RUNSC_PLATFORM_CHOSEN=$p
        say "platform $p (probed before for runsc $(runsc_version): $STATE_DIR/runsc; delete it to probe again)"
        return 0
    fi
    for p in $RUNSC_PLATFORMS; do
        if [ "$p" = kvm ] && ! kvm_works; then
            say "platform kvm: $KVM_DEVICE missing or not answering, skipped"
            continue
        fi
        if probe_platform "$p"; then
            RUNSC_PLATFORM_CHOSEN=$p
            say "platform $p: a sandbox answered; chosen"
            return 0
        fi
    done
    problem "no gVisor platform ($RUNSC_PLATFORMS) starts a sandbox on this host"
    return 1
}

record_runsc() {
    mkdir -p "$STATE_DIR" &&
        printf 'version=%s\nplatform=%s\npath=%s\nrecorded=%s\n' "$(runsc_version)" \
            "$RUNSC_PLATFORM_CHOSEN" "$(runsc_bin)" "$(date -u +%FT%TZ)" >"$STATE_DIR/runsc" &&
        say "runsc $(runsc_version), platform $RUNSC_PLATFORM_CHOSEN (recorded in $STATE_DIR/runsc)"
}

check_runsc_version() {
    local date
    date=$(runsc_date)
    if [ -z "$date" ]; then
        problem "runsc is not installed or does not report its version. Fix: 'images/host-setup.sh --fix'."
    elif [ "$date" -lt "$RUNSC_MIN_DATE" ]; then
        problem "runsc $(runsc_version) is older than sandgate's minimum ($RUNSC_MIN_DATE). Fix: 'images/host-setup.sh --fix' installs runsc $RUNSC_PIN (bookworm-backports)."
    fi
}
