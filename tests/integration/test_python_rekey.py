"""The Python runner's re-keying of random generators (images/python/rekey.py),
with the host's python3: two forks of one process share its memory as two
sandboxes restored from one checkpoint do. A fork reseeds what a restore
does not (random's own generator at fork, tempfile's on a new pid), so each
child first puts back the state the parent had, as a restore with the same
pid would find it; without re-keying the children then draw the same numbers
(checked first: the test can fail) and with it they do not.
NumPy's part runs in the image (tests/e2e/test_direct_backend.py, restored
sandboxes)."""
import importlib.util
import json
import os
import random
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REKEY = os.path.join(ROOT, "images", "python", "rekey.py")


def load():
    spec = importlib.util.spec_from_file_location("sandgate_rekey", REKEY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Rekey(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rekey = load()
        tempfile.mktemp()  # tempfile's name sequence exists before the "checkpoint"
        cls.lib_rng = random.Random(1234)  # as a library makes at import time
        cls.found = cls.rekey.find()
        seq = tempfile._name_sequence
        cls.snapshot = (random.getstate(), seq, seq._rng.getstate())

    @classmethod
    def as_restored(cls):
        """In a forked child: the generators as a restore finds them."""
        state, seq, seq_state = cls.snapshot
        random.setstate(state)
        tempfile._name_sequence = seq
        seq._rng_pid = os.getpid()
        seq._rng.setstate(seq_state)

    def draw(self, rekey_on):
        """What a child forked now draws, re-keyed first or not."""
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                self.as_restored()
                if rekey_on:
                    self.rekey.rekey(self.found)
                out = [random.random(), self.lib_rng.random(), random.gauss(0, 1),
                       os.path.basename(tempfile.mktemp())]
                os.write(w, json.dumps(out).encode())
            finally:
                os._exit(0)
        os.close(w)
        data = os.read(r, 65536)
        os.close(r)
        os.waitpid(pid, 0)
        return json.loads(data)

    def test_forks_share_generators_without_it(self):
        a, b = self.draw(False), self.draw(False)
        self.assertEqual(a, b)

    def test_each_fork_draws_its_own_numbers_with_it(self):
        a, b = self.draw(True), self.draw(True)
        for i, what in enumerate(("random.random", "a library's Random", "random.gauss",
                                  "tempfile.mktemp")):
            self.assertNotEqual(a[i], b[i], what)

    def test_find_sees_every_random_instance(self):
        pyrand = self.found[0]
        self.assertTrue(any(r is self.lib_rng for r in pyrand))
        self.assertTrue(any(r is random._inst for r in pyrand))

    def test_it_is_cheap(self):
        t0 = time.perf_counter()
        for _ in range(20):
            self.rekey.rekey(self.found)
        self.assertLess((time.perf_counter() - t0) / 20, 0.001)


if __name__ == "__main__":
    unittest.main()
