"""How the Python runner ends (images/python/runner.py, exit_now): with
os._exit, skipping the interpreter's finalization (docs/executor.md, "Where
a pool sandbox's CPU goes"), but with what it wrote to its streams flushed
and main()'s return value as the exit status, as sys.exit would give it.
Run with the host's python3 on the runner module itself; stdout and stderr
are pipes, as in a sandbox, so an unflushed write would be lost."""
import os
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNNER_DIR = os.path.join(ROOT, "images", "python")


def end_with(value_expr, before=""):
    """Imports runner.py, writes to both streams without a newline (block
    buffered on a pipe), registers an exit handler, then exit_now(value)."""
    code = (f"import sys, atexit\nsys.path.insert(0, {RUNNER_DIR!r})\nimport runner\n"
            "atexit.register(lambda: sys.stderr.write('finalized'))\n"
            f"{before}sys.stdout.write('out-partial')\nsys.stderr.write('err-partial')\n"
            f"runner.exit_now({value_expr})\n")
    return subprocess.run([sys.executable, "-I", "-B", "-c", code], capture_output=True,
                          timeout=60)


class RunnerExit(unittest.TestCase):
    def test_buffered_output_is_flushed_before_the_exit(self):
        p = end_with("0")
        self.assertEqual(p.stdout, b"out-partial")
        self.assertEqual(p.stderr, b"err-partial")

    def test_no_finalization_runs(self):
        p = end_with("0")
        self.assertNotIn(b"finalized", p.stderr, "exit handlers run: not os._exit")

    def test_exit_status_as_sys_exit_gives_it(self):
        self.assertEqual(end_with("0").returncode, 0)
        self.assertEqual(end_with("3").returncode, 3)
        self.assertEqual(end_with("None").returncode, 0)
        self.assertEqual(end_with("'not a number'").returncode, 1)

    def test_a_closed_stream_does_not_stop_the_exit(self):
        p = end_with("5", before="import os\nsys.stdout.write('x')\nos.close(1)\n")
        self.assertEqual(p.returncode, 5)


if __name__ == "__main__":
    unittest.main()
