"""egress_acl.py - Squid external ACL helper of sandgate's egress proxy.

Squid asks once per request (CONNECT host:port, or the host of a plain-HTTP
URL): "<client address> <host> <port>". The answer is OK only when

  * the executor has written an allow-list for that client address (a file
    allow/<address> in the state directory: {"job_id": ..., "allow": [...]}),
    which exists only while a job owns the sandbox at that address;
  * an entry of that list matches host and port (README, "Network": exact
    names, "*.suffix" wildcards, "*", CIDRs for address literals; each with
    an optional ":port", default 80 and 443);
  * no address the host resolves to is link-local / metadata / loopback /
    unspecified (never, whatever the list), nor in the blocked networks
    (the gateway's and executors' own) unless the entry names the host
    exactly (an operator-listed internal host).

Every decision is appended to decisions/<address> (bounded), which the
executor reads and removes when the job ends; the answer tags the request
with the job id, which the access-log line of its bytes carries
(egress_log.py). Lines are answered in order;
any malformed line is refused, never fatal.
"""
import ipaddress
import json
import os
import socket
import sys
import urllib.parse

STATE = os.environ.get("SANDGATE_EGRESS_DIR", "/run/sandgate-egress")
BLOCK_FILE = "/etc/squid/sandgate-block.conf"
MAX_ALLOW_BYTES = 65536
MAX_DECISIONS_BYTES = 65536
DEFAULT_PORTS = (80, 443)
NEVER = [ipaddress.ip_network(n) for n in (
    "169.254.0.0/16", "fe80::/10", "fd00:ec2::254/128", "127.0.0.0/8", "::1/128",
    "0.0.0.0/8", "::/128", "224.0.0.0/4", "ff00::/8")]


def load_block():
    nets = []
    try:
        text = open(BLOCK_FILE).read()
    except OSError:
        return nets
    for word in text.replace(",", " ").split():
        try:
            nets.append(ipaddress.ip_network(word, strict=False))
        except ValueError:
            print(f"egress_acl: ignoring bad blocked network {word!r}", file=sys.stderr)
    return nets


BLOCK = load_block()


def split_port(entry):
    """("host-or-net", port or None) of an allow-list entry."""
    if entry.startswith("["):
        end = entry.find("]")
        rest = entry[end + 1:]
        port = int(rest[1:]) if rest.startswith(":") else None
        return entry[1:end], port
    if entry.count(":") == 1:
        host, _, p = entry.partition(":")
        return host, int(p)
    return entry, None


def as_ip(text):
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def entry_matches(entry, host, port):
    """None, or "exact" / "wildcard" / "cidr" for the kind of match."""
    try:
        pattern, eport = split_port(entry)
    except ValueError:
        return None
    if (eport is None and port not in DEFAULT_PORTS) or (eport is not None and eport != port):
        return None
    pattern = pattern.lower()
    if "/" in pattern:
        ip = as_ip(host)
        try:
            return "cidr" if ip and ip in ipaddress.ip_network(pattern, strict=False) else None
        except ValueError:
            return None
    if pattern == "*":
        return "wildcard"
    if pattern.startswith("*."):
        return "wildcard" if host.endswith(pattern[1:]) and len(host) > len(pattern) - 1 else None
    return "exact" if host == pattern else None


def addresses(host):
    ip = as_ip(host)
    if ip:
        return [ip]
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except OSError:
        return None
    return [ipaddress.ip_address(i[4][0].split("%")[0]) for i in infos]


def decide(src, host, port):
    """(ok, job_id, reason)."""
    try:
        with open(os.path.join(STATE, "allow", str(src))) as f:
            doc = json.loads(f.read(MAX_ALLOW_BYTES))
    except (OSError, ValueError):
        return False, None, "no job with network owns this sandbox"
    job_id = str(doc.get("job_id", ""))[:64]
    kind = None
    for entry in doc.get("allow", []):
        if isinstance(entry, str):
            kind = entry_matches(entry, host, port)
            if kind:
                break
    if not kind:
        return False, job_id, "not in this job's allow-list"
    addrs = addresses(host)
    if not addrs:
        return False, job_id, "name does not resolve"
    for a in addrs:
        a = getattr(a, "ipv4_mapped", None) or a
        if any(a in n for n in NEVER):
            return False, job_id, "address is never reachable from a sandbox"
        if kind != "exact" and any(a in n for n in BLOCK):
            return False, job_id, "internal address: only reachable when listed by name"
    return True, job_id, "allowed"


def append_line(src, line, failure):
    """Appends line to decisions/<src> while the file stays within
    MAX_DECISIONS_BYTES; egress_log.py appends there too, through this.
    A failure is reported on stderr (prefixed with `failure`), never fatal."""
    path = os.path.join(STATE, "decisions", str(src))
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            if os.fstat(fd).st_size + len(line) <= MAX_DECISIONS_BYTES:
                os.write(fd, line.encode())
        finally:
            os.close(fd)
    except OSError as e:
        print(f"{failure}: {e}", file=sys.stderr)


def record(src, job_id, host, port, ok, reason):
    line = json.dumps({"job_id": job_id, "host": host, "port": port,
                       "verdict": "allowed" if ok else "denied", "reason": reason}) + "\n"
    append_line(src, line, "egress_acl: cannot record a decision")


def answer(line):
    # Squid appends the ACL's arguments ("-" when there are none)
    words = line.split()
    if len(words) == 4 and words[3] == "-":
        words = words[:3]
    if len(words) != 3:
        return "ERR message=malformed"
    src = as_ip(words[0])
    host = urllib.parse.unquote(words[1]).strip("[]").lower().rstrip(".")
    try:
        port = int(words[2])
    except ValueError:
        port = -1
    if src is None or not host or not 0 < port < 65536 or len(host) > 253:
        return "ERR message=malformed"
    ok, job_id, reason = decide(src, host, port)
    if job_id is not None:
        record(src, job_id, host, port, ok, reason)
    # the job id tags the request: the access-log line of its bytes names it
    tag = "" if job_id is None else " tag=" + urllib.parse.quote(job_id, safe="")
    return ("OK" if ok else "ERR message=" + urllib.parse.quote(reason)) + tag


def main():
    # Squid starts helpers with its umask (027): the executors, in another
    # group, must read decisions/ files
    os.umask(0o022)
    for line in sys.stdin:
        sys.stdout.write(answer(line) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
