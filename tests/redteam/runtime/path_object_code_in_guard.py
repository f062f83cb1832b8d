# job code inside the guard: an object whose path protocol is the job's own
# code, handed to a library that raises an audited event with it (shutil's
# rmtree event carries the object as given). Were the guard to call
# __fspath__ while checking, the job's code would run in the hook's frame and
# could reach its state; the guard formats exact built-in types only, so the
# object itself is the denial.
import matplotlib

SEEN = []


class Path:
    def __fspath__(self):
        SEEN.append("called")
        return "/etc"


def main():
    try:
        getattr(matplotlib, "sh" + "util").rmtree(Path(), ignore_errors=True)
    except Exception:
        pass
    return SEEN
