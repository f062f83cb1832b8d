"""The Kubernetes manifests (deploy/kubernetes) pass the offline structural
check (deploy/kubernetes/check.py), and the check catches each kind of break
it claims to: a mutated copy of the manifests must fail with the right line.
No cluster is involved; this is not the API server's validation.
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import sgtest

DIR = os.path.join(sgtest.ROOT, "deploy", "kubernetes")
CHECK = os.path.join(DIR, "check.py")


def run_check(directory):
    files = sorted(glob.glob(os.path.join(directory, "*.yaml")))
    return subprocess.run([sys.executable, CHECK] + files, capture_output=True, text=True,
                          timeout=60)


class K8sManifests(unittest.TestCase):
    def test_manifests_are_clean(self):
        r = run_check(DIR)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("6 files, 0 problems", r.stdout)

    def test_each_break_is_caught(self):
        cases = [
            ("executors.yaml", "sandgate.io/sandbox: \"true\"\n      automount",
             "sandgate.io/other: \"true\"\n      automount", "must run only on"),
            ("gateway.yaml", "sandgate-executor-python.sandgate", "sandgate-exec-python.sandgate",
             "names no headless Service"),
            ("gateway.yaml", "secretName: sandgate-tokens,", "secretName: sandgate-tokenz,",
             "does not generate"),
            ("gateway.yaml", "selector: {app.kubernetes.io/name: sandgate-gateway}",
             "selector: {app.kubernetes.io/name: sandgate-gw}", "selects no workload"),
            ("networkpolicies.yaml", "matchLabels: {app.kubernetes.io/component: executor}\n  policyTypes",
             "matchLabels: {app.kubernetes.io/component: executr}\n  policyTypes", "selects no Pods"),
            ("gateway.yaml", "readOnlyRootFilesystem: true", "readOnlyRootFilesystem: false",
             "read-only"),
            ("executors.yaml", "hostPath: {path: /var/run/docker.sock",
             "hostPath: {path: /run/other.sock", "no Docker socket"),
            ("executors.yaml", "{name: SANDGATE_SESSION_DIR,", "{name: SANDGATE_SESSION_DIX,",
             "no session directory"),
            ("executors.yaml", "emptyDir: {sizeLimit: 64Mi}",
             "emptyDir: {medium: Memory, sizeLimit: 64Mi}", "not on a writable Pod volume"),
            ("executors.yaml", "{name: sessions, mountPath: /var/lib/sandgate/sessions}",
             "{name: sessions, mountPath: /var/lib/sandgate/other}",
             "not on a writable Pod volume"),
        ]
        for name, old, new, expect in cases:
            with self.subTest(file=name, expect=expect):
                tmp = tempfile.mkdtemp(prefix="sg-k8s-")
                try:
                    for f in glob.glob(os.path.join(DIR, "*.yaml")):
                        shutil.copy(f, tmp)
                    path = os.path.join(tmp, name)
                    with open(path) as f:
                        text = f.read()
                    self.assertIn(old, text, "the mutation must apply")
                    with open(path, "w") as f:
                        f.write(text.replace(old, new, 1))
                    r = run_check(tmp)
                    self.assertEqual(r.returncode, 1, r.stdout)
                    self.assertIn(expect, r.stdout)
                finally:
                    shutil.rmtree(tmp)
