"""`make bench`'s summary table (bench/summary.py) and the helper the bench
scripts append its rows with (bench/lib.sh bench_summary): two scripts' rows
become one table with the machine and the load stated once; a script run
alone writes nothing; a missing or empty rows file and a failed script are
said, not hidden."""
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUMMARY = os.path.join(ROOT, "bench", "summary.py")
HEADER = "| what | measured (medians, p99, ratios) | target |"


def fake_script(rows):
    """A bench script as the run-*.sh are: sources lib.sh, calls bench_summary."""
    calls = "\n".join("bench_summary %s %s %s" % tuple("'%s'" % c for c in r) for r in rows)
    return f". '{ROOT}/bench/lib.sh'\n{calls}\necho figures printed as before\n"


class BenchSummary(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.rows = os.path.join(self.tmp.name, "rows.md")

    def tearDown(self):
        self.tmp.cleanup()

    def script(self, rows, env_rows=True):
        env = dict(os.environ)
        env.pop("BENCH_SUMMARY", None)
        if env_rows:
            env["BENCH_SUMMARY"] = self.rows
        out = subprocess.run(["bash", "-c", fake_script(rows)], env=env, capture_output=True,
                             text=True, timeout=30)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("figures printed as before", out.stdout)

    def summary(self, *extra):
        return subprocess.run([sys.executable, SUMMARY, self.rows, "--load-start", "0.50 0.40 0.30",
                               "--load-end", "3.10 1.20 0.60", *extra],
                              capture_output=True, text=True, timeout=60)

    def test_two_scripts_one_table(self):
        self.script([("analysis, 2 KB job", "p50 40 us", "<= 100 us: met")])
        self.script([("hello-world via /v1/run", "p50 20.1 ms | p99 45 ms", "-"),
                     ("pool creation", "3.1 sandboxes/s", ">= 1.5x: not met")])
        out_file = os.path.join(self.tmp.name, "summary.md")
        out = self.summary("--seconds", "1500", "--out", out_file)
        self.assertEqual(out.returncode, 0, out.stderr)
        text = out.stdout
        with open(out_file) as f:
            self.assertEqual(f.read(), text)
        lines = text.splitlines()
        self.assertEqual(lines.count(HEADER), 1)
        self.assertEqual(sum("Load average" in x for x in lines), 1)
        machine = lines[0]
        self.assertIn(f"{os.cpu_count()} CPUs", machine)
        self.assertIn("0.50 0.40 0.30 at the start, 3.10 1.20 0.60 at the end", machine)
        self.assertIn("in 25.0 min", machine)
        for fact in ("GiB", "kernel ", "runsc ", "Docker "):
            self.assertIn(fact, machine)
        body = lines[lines.index(HEADER) + 2:]
        self.assertEqual(body, [
            "| analysis, 2 KB job | p50 40 us | <= 100 us: met |",
            "| hello-world via /v1/run | p50 20.1 ms \\| p99 45 ms | - |",
            "| pool creation | 3.1 sandboxes/s | >= 1.5x: not met |",
        ])

    def test_script_alone_writes_nothing(self):
        self.script([("x", "1", "-")], env_rows=False)
        self.assertFalse(os.path.exists(self.rows))

    def test_missing_rows_file_is_said(self):
        out = self.summary()
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("no rows", out.stderr)
        self.assertIn(self.rows, out.stderr)
        self.assertNotIn(HEADER, out.stdout)

    def test_empty_rows_file_is_said(self):
        open(self.rows, "w").close()
        out = self.summary()
        self.assertNotEqual(out.returncode, 0)
        self.assertIn(f"no rows in {self.rows}", out.stderr)

    def test_failed_script_named_and_exit_1(self):
        self.script([("x", "1", "-")])
        out = self.summary("--failed", " run-soak.sh run-sets.sh")
        self.assertEqual(out.returncode, 1)
        self.assertIn("| x | 1 | - |", out.stdout)
        self.assertIn("Failed, no figures: run-soak.sh, run-sets.sh", out.stdout)


if __name__ == "__main__":
    unittest.main()
