"""The Swarm stack file (deploy/swarm/stack.yml), read as YAML, never
deployed (the swarm suite deploys it): each executor service keeps its
session records (SANDGATE_SESSION_DIR) on a named volume the stack declares,
its own directory on it, so the task Swarm starts in place of one that died
on that node takes the sessions back; `swarm.sh down` removes the volumes.
The same for the compose stack, which does it with a volume per executor."""
import os
import unittest

import yaml

import sgtest

STACK = os.path.join(sgtest.ROOT, "deploy", "swarm", "stack.yml")
COMPOSE = os.path.join(sgtest.ROOT, "docker-compose.yml")
SWARM_SH = os.path.join(sgtest.ROOT, "deploy", "swarm", "swarm.sh")
EXECUTORS = ("executor-python", "executor-nodejs")


def session_volume(doc, service):
    """(the session directory, the named volume that holds it) of a service."""
    svc = doc["services"][service]
    d = (svc.get("environment") or {}).get("SANDGATE_SESSION_DIR")
    found = None
    for v in svc.get("volumes", []):
        if isinstance(v, str):
            src, _, rest = v.partition(":")
            v = {"type": "volume" if not src.startswith(("/", ".", "$")) else "bind",
                 "source": src, "target": rest.split(":")[0]}
        t = v.get("target", "").rstrip("/")
        if d and (d == t or d.startswith(t + "/")) and v.get("type") == "volume":
            found = v["source"]
    return d, found


class SessionDirs(unittest.TestCase):
    def check(self, path):
        with open(path) as f:
            doc = yaml.safe_load(f)
        dirs = set()
        for name in EXECUTORS:
            with self.subTest(stack=os.path.basename(path), service=name):
                d, vol = session_volume(doc, name)
                self.assertTrue(d, "SANDGATE_SESSION_DIR is not set")
                self.assertIsNotNone(vol, f"{d} is not on a named volume")
                self.assertIn(vol, doc.get("volumes") or {}, "the volume is not declared")
                self.assertFalse(d.startswith("/tmp"), "not on the tmpfs")
                dirs.add((vol, d))
        self.assertEqual(len(dirs), len(EXECUTORS), "one directory per executor")

    def test_swarm_executors_keep_their_sessions_on_a_named_volume(self):
        self.check(STACK)

    def test_compose_executors_keep_their_sessions_on_a_named_volume(self):
        self.check(COMPOSE)

    def test_swarm_down_removes_the_stack_volumes(self):
        with open(SWARM_SH) as f:
            text = f.read()
        self.assertIn('docker volume ls -q --filter "label=com.docker.stack.namespace=$STACK"',
                      text)

    def test_a_stack_without_it_fails_the_check(self):
        with open(STACK) as f:
            doc = yaml.safe_load(f)
        del doc["services"]["executor-python"]["environment"]["SANDGATE_SESSION_DIR"]
        self.assertEqual(session_volume(doc, "executor-python"), (None, None))
        with open(STACK) as f:
            doc = yaml.safe_load(f)
        doc["services"]["executor-nodejs"]["volumes"] = [
            v for v in doc["services"]["executor-nodejs"]["volumes"]
            if not (isinstance(v, dict) and v.get("source") == "executor-sessions")]
        self.assertIsNone(session_volume(doc, "executor-nodejs")[1])


if __name__ == "__main__":
    unittest.main()
