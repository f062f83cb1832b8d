#!/usr/bin/python3 -I
"""egress_log.py - Squid logfile daemon of sandgate's egress proxy.

Squid writes one access-log line per finished request (a CONNECT tunnel when
it closes, a plain-HTTP request when its reply is sent) to this program's
stdin, each prefixed with a command letter: "L" a log line, the others
(rotate, truncate, reopen, flush, buffering) mean nothing here. The line's
format is squid.conf's `sandgate` logformat:

    <client address> <job id tag> <host> <port> <status> <bytes in> <bytes out>

Each line becomes a JSON line {"job_id", "host", "port", "status",
"bytes_in", "bytes_out"} appended to decisions/<client address> beside the
ACL helper's decisions, under the same size bound: the executor reads it
when the job ends and removes it (README, "Network"). Nothing else is kept,
so the log cannot grow without bound. A malformed line is dropped, never
fatal: Squid restarts a daemon that exits and loses lines meanwhile.
"""
import ipaddress
import json
import os
import sys
import urllib.parse

STATE = os.environ.get("SANDGATE_EGRESS_DIR", "/run/sandgate-egress")
MAX_DECISIONS_BYTES = 65536  # egress_acl.py's bound of the same file
MAX_LINE = 4096


def as_int(word):
    try:
        v = int(word)
    except ValueError:
        return None
    return v if 0 <= v < 2**63 else None


def parse(text):
    """The JSON line of one access-log line, with its client address; None
    when malformed or not a job's (no tag: refused before the helper ran)."""
    words = text.split()
    if len(words) != 7 or words[1] == "-":
        return None, None
    try:
        src = ipaddress.ip_address(words[0])
    except ValueError:
        return None, None
    src = getattr(src, "ipv4_mapped", None) or src
    port, status, bytes_in, bytes_out = (as_int(w) for w in words[3:7])
    host = urllib.parse.unquote(words[2]).strip("[]").lower().rstrip(".")
    if None in (port, status, bytes_in, bytes_out) or not host or len(host) > 253:
        return None, None
    line = json.dumps({"job_id": urllib.parse.unquote(words[1])[:64], "host": host,
                       "port": port, "status": status, "bytes_in": bytes_in,
                       "bytes_out": bytes_out})
    return src, line + "\n"


def append(src, line):
    path = os.path.join(STATE, "decisions", str(src))
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            if os.fstat(fd).st_size + len(line) <= MAX_DECISIONS_BYTES:
                os.write(fd, line.encode())
        finally:
            os.close(fd)
    except OSError as e:
        print(f"egress_log: cannot record a connection: {e}", file=sys.stderr)


def main():
    os.umask(0o022)  # the executors, in another group, read decisions/ files
    for raw in sys.stdin.buffer:
        if not raw.startswith(b"L") or len(raw) > MAX_LINE:
            continue
        src, line = parse(raw[1:].decode("utf-8", "replace"))
        if src is not None:
            append(src, line)


if __name__ == "__main__":
    main()
