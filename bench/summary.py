#!/usr/bin/env python3
"""summary.py - the one table `make bench` ends with.

  summary.py ROWS --load-start "L1 L5 L15" --load-end "L1 L5 L15"
             [--seconds S] [--failed "run-x.sh ..."] [--out FILE]

ROWS is the file the bench scripts appended their headline rows to
(bench/lib.sh bench_summary: `| what | measured | target |`, one a line).
Prints, and writes to FILE when given, one markdown table: the machine
(CPUs, memory, kernel, runsc version and platform, Docker version) and the
load average at the start and the end stated once above it, then every row
in the order the scripts wrote them. Exits 1 with a message naming ROWS when
it is missing or holds no row, and 1 after writing the table when a script
failed (--failed), so `make bench` fails too.
"""
import argparse
import json
import os
import platform
import subprocess
import sys

HEADER = "| what | measured (medians, p99, ratios) | target |"
MAX_ROWS = 1000  # a runaway script must not make the table unreadable


def run(argv):
    """The stripped stdout of argv, or None when it cannot be run."""
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()


def memory_gib():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return "%.1f GiB" % (int(line.split()[1]) / 1024 / 1024)
    except OSError:
        pass
    return "unknown memory"


def runsc_facts():
    """runsc's version and the platform the Docker runtime "runsc" runs it on."""
    version = run(["runsc", "--version"])
    version = version.splitlines()[0].replace("runsc version ", "") if version else "unknown"
    plat = "unknown platform"
    runtimes = run(["docker", "info", "--format", "{{json .Runtimes}}"])
    try:
        args = json.loads(runtimes or "{}").get("runsc", {}).get("runtimeArgs") or []
    except ValueError:
        args = []
    for a in args:
        if a.startswith("--platform="):
            plat = a.split("=", 1)[1]
    return version, plat


def machine():
    version, plat = runsc_facts()
    docker = run(["docker", "version", "--format", "{{.Server.Version}}"]) or "unknown"
    return (f"{os.cpu_count()} CPUs, {memory_gib()}, kernel {platform.release()}, "
            f"runsc {version} ({plat}), Docker {docker}")


def read_rows(path):
    try:
        with open(path) as f:
            rows = [line.rstrip("\n") for line in f if line.startswith("|")]
    except OSError as e:
        raise SystemExit(f"summary: no rows: {path}: {e.strerror} (run the benchmarks"
                         " through `make bench`, which sets BENCH_SUMMARY)")
    if not rows:
        raise SystemExit(f"summary: no rows in {path}: no benchmark called bench_summary")
    return rows[:MAX_ROWS]


def table(rows, load_start, load_end, seconds=None, failed=()):
    took = f" in {seconds / 60:.1f} min" if seconds is not None else ""
    lines = [f"One `make bench` run{took}. Machine: {machine()}. "
             f"Load average (1, 5, 15 min): {load_start} at the start, {load_end} at the end.",
             "", HEADER, "|---|---|---|"]
    lines += rows
    if failed:
        lines += ["", "Failed, no figures: " + ", ".join(failed)]
    return "\n".join(lines) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rows")
    ap.add_argument("--load-start", required=True)
    ap.add_argument("--load-end", required=True)
    ap.add_argument("--seconds", type=int)
    ap.add_argument("--failed", default="")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    failed = a.failed.split()
    text = table(read_rows(a.rows), a.load_start, a.load_end, a.seconds, failed)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    sys.stdout.write(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
