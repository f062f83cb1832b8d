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


def load_acl():
    """egress_acl.py, beside this file, for its bounded append (`python3 -I`
    puts no script directory on the import path)."""
    import importlib.util
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("egress_acl", os.path.join(here, "egress_acl.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ACL = load_acl()


def append(src, line):
    ACL.append_line(src, line, "egress_log: cannot record a connection")


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
