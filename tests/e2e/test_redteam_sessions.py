"""The multi-cell red-team corpus (tests/redteam/sessions/), end to end on
dockerd + runsc with the in-process layer ON: each file is a session of
cells (and files uploaded between them) that splits a forbidden route over
cells, switches the guard off in one cell to use it in the next, or imports
a file uploaded in an earlier cell. Cells go straight to an executor with
the default policy's run-time section (no static check in front: what is
proved here is the run-time layer's). Every file passes when no step shows
its effect (the word EFFECT in any output) and the session ends as its
`# expect:` line says: `unauthorized_access`, optionally with the type.

A file is steps, each opened by a marker line: `# ---- cell` (Node:
`// ---- cell`) for code run as a cell, `# ---- file NAME` for bytes
uploaded to the session's workspace as NAME."""
import os
import re
import unittest

import sgsession
import sgtest
import test_executor as tex
from test_runtime_policy import runtime_of

CORPUS = os.path.join(sgtest.ROOT, "tests", "redteam", "sessions")
MARKER = re.compile(r"^(?:#|//) ---- (cell|file (\S+))$", re.M)
EXPECT = re.compile(r"^(?:#|//) expect: (\S+)(?: (\S+))?$", re.M)
EXT = {"python": ".py", "nodejs": ".js"}


def load(path):
    """(expected status, expected type or None, [(kind, name, text)])."""
    with open(path) as f:
        text = f.read()
    want = EXPECT.search(text)
    assert want, f"{path}: no '# expect:' line"
    marks = list(MARKER.finditer(text))
    assert marks, f"{path}: no step"
    steps = []
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        body = text[m.end() + 1:end]
        steps.append(("file", m.group(2), body) if m.group(2) else ("cell", None, body))
    return want.group(1), want.group(2), steps


class SessionCorpus:
    LANGUAGE = None

    @classmethod
    def setUpClass(cls):
        tex.require_engine_and_images()
        cls.ex = tex.Executor(cls.LANGUAGE, pool_size=1, extra=("--max-sessions", "2"))

    @classmethod
    def tearDownClass(cls):
        assert cls.ex.stop() == 0, cls.ex.daemon.tail()
        assert cls.ex.containers() == [], "containers left behind"

    def files(self):
        names = sorted(n for n in os.listdir(CORPUS) if n.endswith(EXT[self.LANGUAGE]))
        self.assertTrue(names, "an empty corpus proves nothing")
        return names

    def run_file(self, name):
        status, kind, steps = load(os.path.join(CORPUS, name))
        session = sgsession.open_session(self, self.ex.url, self.LANGUAGE,
                                         f"t.redteam.sessions.{self.LANGUAGE}",
                                         runtime_of("default", self.LANGUAGE))
        results = []
        try:
            for what, fname, text in steps:
                if what == "file":
                    session.upload(fname, text.encode())
                    continue
                body = session(text)
                results.append(body)
                self.assertNotIn("EFFECT", body.get("stdout", "") + body.get("stderr", ""),
                                 (name, body))
                if body.get("session_lost"):
                    break
        finally:
            session.close()
        last = results[-1]
        self.assertEqual(last["status"], status, (name, results))
        if kind:
            self.assertEqual(last["unauthorized_access_type"], kind, (name, results))
        return results

    def test_corpus(self):
        for name in self.files():
            with self.subTest(file=name):
                self.run_file(name)


class PythonSessionCorpus(SessionCorpus, unittest.TestCase):
    LANGUAGE = "python"


class NodeSessionCorpus(SessionCorpus, unittest.TestCase):
    LANGUAGE = "nodejs"


if __name__ == "__main__":
    unittest.main()
