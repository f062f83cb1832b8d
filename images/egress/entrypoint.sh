#!/bin/sh
# State directory shared with the executors (SANDGATE_EGRESS_DIR, default
# /run/sandgate-egress): allow/<sandbox address> is written by the executor,
# decisions/<sandbox address> by the ACL helper (decisions) and the logfile
# daemon egress_log.py (bytes per finished request).
# Blocked networks, refused unless a job's list names the host exactly (an
# operator-listed internal host): SANDGATE_EGRESS_BLOCK (CIDRs), the file
# SANDGATE_EGRESS_BLOCK_FILE (make up writes the gateway's and executors'
# networks there), and always the host as each of this container's networks
# sees it (its gateway addresses).
# SANDGATE_EGRESS_WRITER_GID: the executors' group (they write allow/ and
# remove decisions/ files); 0 when they run as root.
set -eu
dir=${SANDGATE_EGRESS_DIR:-/run/sandgate-egress}
gid=${SANDGATE_EGRESS_WRITER_GID:-0}
mkdir -p "$dir/allow" "$dir/decisions"
# chmod before chown: without CAP_FOWNER root may change only its own files
chmod 0775 "$dir/allow" && chown "0:$gid" "$dir/allow"
chmod 0770 "$dir/decisions" && chown "proxy:$gid" "$dir/decisions"
chmod 0755 "$dir"
gateways=$(python3 -I -c 'import socket, struct
for line in open("/proc/net/route").readlines()[1:]:
    g = line.split()[2]
    if g != "00000000":
        print(socket.inet_ntoa(struct.pack("<L", int(g, 16))))' | sort -u)
{
    printf '%s\n' "${SANDGATE_EGRESS_BLOCK:-}" $gateways
    [ -n "${SANDGATE_EGRESS_BLOCK_FILE:-}" ] && [ -r "$SANDGATE_EGRESS_BLOCK_FILE" ] &&
        cat "$SANDGATE_EGRESS_BLOCK_FILE"
    true
} >/etc/squid/sandgate-block.conf
exec /usr/sbin/squid -N -f /etc/squid/squid.conf
