#!/usr/bin/env bash
# egress-firewall.sh install NETWORK PROXY_IP:PORT | remove NETWORK | show NETWORK | prune
#
# The host packet filter of a networked-sandbox network (README, "Network"):
# a sandbox on NETWORK may open a connection to the egress proxy's
# PROXY_IP:PORT and to nothing else - not this host's addresses (the bridge's
# gateway, other bridges, eth0: the INPUT chain), not other sandboxes or
# containers (FORWARD, also between two ports of the same bridge). Docker's
# own isolation rules filter FORWARD only, and accept traffic inside a bridge.
#
#   iptables (IPv4), chain SANDGATE-EGRESS, jumped to first from INPUT and
#   DOCKER-USER; one rule there per network sends what enters from its bridge
#   to SG-EGRESS-<network id, 12 hex>:
#       ESTABLISHED,RELATED                       RETURN (replies of the proxy)
#       NEW tcp to PROXY_IP:PORT                  RETURN (Docker's rules go on)
#       tcp                                       REJECT (reset: fails at once)
#       anything else                             DROP
#   ip6tables: the same jumps (INPUT, FORWARD), and the network's chain drops
#   everything (the networks carry no IPv6; link-local addresses still exist).
#
# install is idempotent (the network's chain is replaced in one
# iptables-restore transaction, jumps added only when missing); remove takes
# out the network's rules, and the shared chain and its jumps with the last
# network; prune removes the rules of bridges that no longer exist. Needs root
# and the iptables this host's Docker uses. Every change holds a lock, so
# concurrent installs and removals (parallel test suites) do not interleave.
set -euo pipefail

LOCK=${SANDGATE_EGRESS_FW_LOCK:-/run/sandgate-egress-firewall.lock}
DISPATCH=SANDGATE-EGRESS
DOCKER=${SANDGATE_DOCKER_CLI:-docker}

die() { echo "egress-firewall: error: $*" >&2; exit 1; }

ipt() { iptables -w 10 "$@"; }
ip6t() { ip6tables -w 10 "$@"; }
have_ip6() { command -v ip6tables >/dev/null && ip6tables -w 10 -S INPUT >/dev/null 2>&1; }

# "ID BRIDGE" of a Docker network.
network_bridge() {
    local id opt
    id=$("$DOCKER" network inspect -f '{{.Id}}' "$1" 2>/dev/null) || die "no Docker network $1"
    opt=$("$DOCKER" network inspect -f '{{index .Options "com.docker.network.bridge.name"}}' "$1")
    [ -n "$opt" ] && [ "$opt" != "<no value>" ] || opt=br-${id:0:12}
    echo "${id:0:12} $opt"
}

# $1 = iptables or ip6tables wrapper, $2... = the chains that jump to DISPATCH
ensure_dispatch() {
    local t=$1 parent
    shift
    $t -N "$DISPATCH" 2>/dev/null || true
    for parent in "$@"; do
        $t -C "$parent" -j "$DISPATCH" 2>/dev/null || $t -I "$parent" 1 -j "$DISPATCH"
    done
}

# $1 wrapper, $2 chain, $3 bridge: the chain's content, then the jump to it.
fill_chain() {
    local t=$1 chain=$2 bridge=$3 restore=iptables-restore
    shift 3
    [ "$t" = ip6t ] && restore=ip6tables-restore
    {
        echo "*filter"
        echo ":$chain - [0:0]"
        printf '%s\n' "$@"
        echo "COMMIT"
    } | $restore -w 10 --noflush
    $t -C "$DISPATCH" -i "$bridge" -j "$chain" 2>/dev/null ||
        $t -A "$DISPATCH" -i "$bridge" -j "$chain"
}

install() {
    local net=$1 proxy=$2 id bridge ip port chain
    ip=${proxy%:*}
    port=${proxy##*:}
    [[ $ip =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ && $port =~ ^[0-9]+$ ]] ||
        die "the proxy must be IPV4:PORT, not '$proxy'"
    read -r id bridge < <(network_bridge "$net")
    chain=SG-EGRESS-$id
    ipt -S DOCKER-USER >/dev/null 2>&1 || die "no DOCKER-USER chain: is this Docker using iptables?"
    ensure_dispatch ipt INPUT DOCKER-USER
    fill_chain ipt "$chain" "$bridge" \
        "-A $chain -m conntrack --ctstate RELATED,ESTABLISHED -j RETURN" \
        "-A $chain -d $ip/32 -p tcp -m tcp --dport $port -m conntrack --ctstate NEW -j RETURN" \
        "-A $chain -p tcp -j REJECT --reject-with tcp-reset" \
        "-A $chain -j DROP"
    if have_ip6; then
        ensure_dispatch ip6t INPUT FORWARD
        fill_chain ip6t "$chain" "$bridge" "-A $chain -j DROP"
    else
        echo "egress-firewall: note: no ip6tables: IPv6 from $bridge is not filtered" >&2
    fi
    echo "egress-firewall: $net ($bridge): only $ip:$port (chain $chain)"
}

# Drop the jump to $2 and the chain itself; the dispatch chain and its jumps
# go with the last network.
drop_chain() {
    local t=$1 chain=$2 rule parents=(INPUT DOCKER-USER)
    [ "$t" = ip6t ] && parents=(INPUT FORWARD)
    $t -S "$DISPATCH" >/dev/null 2>&1 || return 0
    while rule=$($t -S "$DISPATCH" | grep -m1 -- "-j $chain\$"); do
        # shellcheck disable=SC2086
        $t ${rule/-A/-D}
    done
    $t -F "$chain" 2>/dev/null && $t -X "$chain" 2>/dev/null || true
    if [ "$($t -S "$DISPATCH" | wc -l)" = 1 ]; then
        for p in "${parents[@]}"; do
            while $t -D "$p" -j "$DISPATCH" 2>/dev/null; do :; done
        done
        $t -X "$DISPATCH"
    fi
}

remove() {
    local id bridge
    read -r id bridge < <(network_bridge "$1")
    drop_chain ipt "SG-EGRESS-$id"
    have_ip6 && drop_chain ip6t "SG-EGRESS-$id"
    echo "egress-firewall: $1 ($bridge): rules removed"
}

# Chains whose bridge is gone (a network removed without 'remove').
prune() {
    local t rule bridge chain
    for t in ipt ip6t; do
        [ $t = ip6t ] && ! have_ip6 && continue
        while read -r rule; do
            bridge=$(sed -E 's/.* -i ([^ ]+) .*/\1/' <<<"$rule")
            chain=${rule##* -j }
            [ -e "/sys/class/net/$bridge" ] || drop_chain $t "$chain"
        done < <($t -S "$DISPATCH" 2>/dev/null | grep -- '-i ' || true)
    done
}

show() {
    local id bridge
    read -r id bridge < <(network_bridge "$1")
    echo "# iptables ($bridge)"
    ipt -S "$DISPATCH" 2>/dev/null | grep -- "-i $bridge " || true
    ipt -S "SG-EGRESS-$id" 2>/dev/null || true
    if have_ip6; then
        echo "# ip6tables ($bridge)"
        ip6t -S "SG-EGRESS-$id" 2>/dev/null || true
    fi
}

[ $# -ge 1 ] || die "usage: egress-firewall.sh install NETWORK PROXY_IP:PORT | remove NETWORK | show NETWORK | prune"
cmd=$1
shift
case $cmd in
    show) [ $# = 1 ] || die "usage: show NETWORK"; show "$1"; exit 0 ;;
    install) [ $# = 2 ] || die "usage: install NETWORK PROXY_IP:PORT" ;;
    remove) [ $# = 1 ] || die "usage: remove NETWORK" ;;
    prune) [ $# = 0 ] || die "usage: prune" ;;
    *) die "unknown command $cmd" ;;
esac
[ "$(id -u)" = 0 ] || die "$cmd needs root (iptables)"
command -v iptables >/dev/null || die "iptables is not installed"
exec 9>"$LOCK"
flock -w 30 9 || die "another egress-firewall.sh holds $LOCK"
case $cmd in
    install) prune; install "$@" ;;
    remove) remove "$@" ;;
    prune) prune ;;
esac
