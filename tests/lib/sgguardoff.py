"""What the guard-off suites share (tests/e2e/test_guard_off*.py): one
executor per language started with its test-only --test-guard-off (the
runner installs the kernel filter but not the in-process layer), the job
and session helpers, and the check that a job was killed by the kernel
filter and reported by the parent.

A suite mixes GuardOff into its unittest.TestCase and sets LANGUAGE and
TENANT; the mixin is not a TestCase itself, so importing this module never
collects a test."""
import base64
import os
import sys

import sgsession
import sgtest

sys.path.insert(0, os.path.join(sgtest.ROOT, "tests", "integration"))
import test_executor as tex  # noqa: E402  (module import: its tests are not re-collected)
from test_runtime_policy import runtime_of  # noqa: E402

KILLED = "the job's process was killed by the kernel filter (SIGSYS)"
# The type of a kernel kill when the policy refuses processes and sockets
# (the default policy, offline): the kernel does not say which call it was.
EITHER = "process_or_network"


def b64(data):
    return base64.b64encode(data).decode("ascii")


def js(body):
    """A Node module whose main is the given (async) function body."""
    return f"async function main(args) {{\n{body}\n}}\nmodule.exports = {{ main }};\n"


class GuardOff:
    """The class set-up and job helpers of a guard-off suite."""

    LANGUAGE = None  # "python" or "nodejs"
    TENANT = None    # the X-Sandgate-Tenant header the suite's sessions use
    EXTRA = ()       # further executor arguments

    @classmethod
    def setUpClass(cls):
        tex.require_engine_and_images()
        cls.ex = tex.Executor(cls.LANGUAGE, pool_size=2,
                              extra=("--test-guard-off", "--max-sessions", "2") + tuple(cls.EXTRA))

    @classmethod
    def tearDownClass(cls):
        assert cls.ex.stop() == 0, cls.ex.daemon.tail()
        assert cls.ex.containers() == [], "containers left behind"

    def job(self, code, policy="default", runtime=None, **fields):
        fields.setdefault("limits", {"timeout_ms": 30000})
        fields["runtime"] = dict(runtime_of(policy, self.LANGUAGE), **(runtime or {}))
        status, _, body = self.ex.run(code, timeout=90, **fields)
        self.assertEqual(status, 200, body)
        return body

    def value(self, code, **kw):
        body = self.job(code, **kw)
        self.assertEqual(body["status"], "success", body)
        return body["result"]["value"]

    def killed(self, code, kind=EITHER, runtime=None):
        body = self.job(code, runtime=runtime)
        self.assertEqual((body["status"], body["unauthorized_access_type"]),
                         ("unauthorized_access", kind), body)
        self.assertEqual(body["exit_code"], -13, body)
        self.assertIn(KILLED, body["detail"])
        self.assertFalse(body["result"]["present"], body)
        self.assertNotIn("EFFECT", body["stdout"])
        return body

    def session(self, policy="default"):
        """Opens a session under the policy's run-time section (closed at
        the test's end) and returns a function that runs one cell in it."""
        return sgsession.open_session(self, self.ex.url, self.LANGUAGE, self.TENANT,
                                      runtime_of(policy, self.LANGUAGE))
