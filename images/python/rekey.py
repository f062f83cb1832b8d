"""rekey.py - fresh keys for every random generator a job could inherit.

Sandboxes restored from one gVisor checkpoint (the executor's
--sandbox-restore) share the warm runner's memory, so every generator seeded
before the checkpoint would hand each of them the same "random" numbers. The
runner's child therefore re-keys, from os.urandom (the host's, fresh in each
sandbox), every generator alive when the job arrives, on every job whether
the sandbox was restored or booted: one path.

The family, not examples:
  - every random.Random instance (random's module generator random._inst,
    tempfile's name sequence, any a library made), found by a scan of the
    objects the collector tracks;
  - with NumPy loaded, every BitGenerator (MT19937, PCG64, ...: the state of
    every RandomState and Generator, NumPy's global one included), set from a
    fresh SeedSequence, and every RandomState's cached Gaussian dropped;
  - with OpenSSL's module loaded (_ssl), its generator reseeded (RAND_add).

The scan costs milliseconds with pandas loaded, so the runner's child runs
it once while it warms up (find(), before it says ready: what is alive then
is what a checkpoint holds) and the job's arrival only re-keys that list
(rekey()); nothing runs in the child between the two. What cannot be
re-keyed in a running interpreter (the str hash key, the address layout) is
the security model's part (README, "Restored sandboxes")."""
import gc
import os
import sys


def find():
    """The generators alive now: (random.Random instances, NumPy bit
    generators, NumPy RandomState instances)."""
    rnd = sys.modules.get("random")
    np_random = sys.modules.get("numpy.random")
    classes = []
    if rnd is not None:
        classes.append(rnd.Random)
    bitgen = legacy = None
    if np_random is not None:
        bitgen = getattr(sys.modules.get("numpy.random.bit_generator"), "BitGenerator", None)
        legacy = getattr(np_random, "RandomState", None)
        classes += [c for c in (bitgen, legacy) if c is not None]
    if not classes:
        return [], [], []
    found = [o for o in gc.get_objects() if isinstance(o, tuple(classes))]
    pyrand = [o for o in found if rnd is not None and isinstance(o, rnd.Random)]
    bitgens = [o for o in found if bitgen is not None and isinstance(o, bitgen)]
    states = [o for o in found if legacy is not None and isinstance(o, legacy)]
    return pyrand, bitgens, states


def _rekey_numpy(bitgens, states):
    np_random = sys.modules.get("numpy.random")
    if np_random is None or not (bitgens or states):
        return
    seq = np_random.SeedSequence(int.from_bytes(os.urandom(32), "little"))
    for bg, child in zip(bitgens, seq.spawn(len(bitgens))):
        bg.state = type(bg)(child).state
    for rs in states:
        st = rs.get_state(legacy=False)
        st["has_gauss"], st["gauss"] = 0, 0.0
        rs.set_state(st)


def _rekey_openssl():
    ssl = sys.modules.get("_ssl")
    if ssl is not None and hasattr(ssl, "RAND_add"):
        ssl.RAND_add(os.urandom(32), 32.0)


def rekey(found):
    """Re-key what find() returned, and what random and tempfile hold now."""
    pyrand, bitgens, states = found
    rnd = sys.modules.get("random")
    if rnd is not None:
        for r in pyrand + [rnd._inst]:
            r.seed()  # from os.urandom; drops a cached gauss
    tmp = sys.modules.get("tempfile")
    if tmp is not None:
        tmp._name_sequence = None  # made anew, from a re-keyed generator
    _rekey_numpy(bitgens, states)
    _rekey_openssl()
