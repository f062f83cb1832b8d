"""What the stack suites share: docker calls, the environment stack.sh gets
(the images under test, a project of the suite's own), and bringing a stack
up and down with everything the suite created removed."""
import os
import shutil
import subprocess

import sgtest

STACK = os.path.join(sgtest.ROOT, "images", "stack.sh")
IMAGES = tuple(sgtest.image(n) for n in ("gateway", "executor", "python", "nodejs"))


def docker(*args, check=True):
    r = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=120)
    if check and r.returncode != 0:
        raise AssertionError(f"docker {' '.join(args[:3])}: {r.stderr}")
    return r.stdout.strip()


def stack_env(project, port, stack_dir, pool_python="1", **extra):
    """stack.sh's environment: project, published port, stack directory, the
    images of this checkout's tag, plus extra."""
    env = dict(os.environ)
    env.update({
        "SANDGATE_PROJECT": project,
        "SANDGATE_PUBLISH": f"127.0.0.1:{port}",
        "SANDGATE_STACK_DIR": stack_dir,
        "SANDGATE_POOL_SIZE_PYTHON": pool_python,
        "SANDGATE_POOL_SIZE_NODEJS": "1",
        "SANDGATE_READY_TIMEOUT_S": "180",
        "SANDGATE_GATEWAY_IMAGE": sgtest.image("gateway"),
        "SANDGATE_EXECUTOR_IMAGE": sgtest.image("executor"),
        "SANDBOX_BASE_PYTHON_IMAGE": sgtest.image("python"),
        "SANDBOX_BASE_NODEJS_IMAGE": sgtest.image("nodejs"),
        "SANDGATE_EGRESS_IMAGE": sgtest.image("egress"),
    })
    env.update(extra)
    return env


def require_images():
    sgtest.ensure_docker()
    for image in IMAGES:
        if subprocess.run(["docker", "image", "inspect", image], capture_output=True).returncode:
            raise AssertionError(f"image {image} is missing: run 'make images'")


def up(env, teardown):
    """stack.sh up; on failure teardown() and an error with its output."""
    r = subprocess.run([STACK, "up"], env=env, capture_output=True, text=True, timeout=400)
    if r.returncode != 0:
        teardown()
        raise AssertionError(f"stack.sh up failed:\n{(r.stdout + r.stderr)[-4000:]}")
    return r.stdout + r.stderr


def down(env, project, label, networks, stack_dir):
    """stack.sh down, then the suite's own containers (label), networks and
    directory; fails when anything is left."""
    r = subprocess.run([STACK, "down"], env=env, capture_output=True, text=True, timeout=300)
    for cid in docker("ps", "-aq", "--filter", f"label={label}", check=False).split():
        docker("rm", "-f", cid, check=False)
    for net in networks:
        docker("network", "rm", net, check=False)
    shutil.rmtree(stack_dir or "", ignore_errors=True)
    left = (docker("ps", "-aq", "--filter", f"label=com.docker.compose.project={project}",
                   check=False),
            docker("network", "ls", "-q", "--filter", f"label={label}", check=False),
            docker("network", "ls", "-q", "--filter",
                   f"label=com.docker.compose.project={project}", check=False))
    assert r.returncode == 0, r.stdout + r.stderr
    assert left == ("", "", ""), f"left behind: {left}"
