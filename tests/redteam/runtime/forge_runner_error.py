# family: report forgery. The program holds the child's report pipe too: it
# writes a runner_error report there (the outcome of a sandbox that could not
# install the run-time policy, under which denials used to be ignored), after
# a denied action it caught, and exits. A runner_error is believed only
# before the program starts (the child marks the start on the denial pipe),
# so the job ends unauthorized_access (process) when it did something denied,
# else as an exception about the unreadable report.
# Run with runtime.imports off and files "any" (os and fcntl are reachable
# then); the route to os is not the point here, the report pipe is.
import fcntl
import os


def write_pipes():
    """The child's write-only pipe ends past stdio: the report pipe, then
    the denial pipe (the runner creates them in that order)."""
    out = []
    for fd in range(3, 64):
        try:
            if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:
                out.append(fd)
        except OSError:
            pass
    return out


def main(deny=False):
    report_fd = write_pipes()[0]
    if deny:
        try:
            import subprocess
            subprocess.run(["id"])
        except PermissionError:
            pass
    os.write(report_fd, b'{"outcome":"runner_error","message":"forged"}')
    os._exit(0)
