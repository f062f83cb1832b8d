#!/bin/sh
# State directory shared with the executors (SANDGATE_EGRESS_DIR, default
# /run/sandgate-egress): allow/<sandbox address> is written by the executor,
# decisions/<sandbox address> by the ACL helper, access.log by Squid.
# SANDGATE_EGRESS_BLOCK: more CIDRs (the gateway's and executors' networks)
# that are refused unless a job's list names the host exactly.
set -eu
dir=${SANDGATE_EGRESS_DIR:-/run/sandgate-egress}
mkdir -p "$dir/allow" "$dir/decisions"
chown proxy:proxy "$dir/decisions"
chmod 0755 "$dir" "$dir/allow"
touch "$dir/access.log" && chown proxy:proxy "$dir/access.log"
printf '%s\n' "${SANDGATE_EGRESS_BLOCK:-}" >/etc/squid/sandgate-block.conf
exec /usr/sbin/squid -N -f /etc/squid/squid.conf
