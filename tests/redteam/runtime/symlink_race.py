# A check-then-open race: a thread flips /tmp/link between a file of the
# job's own and a link to /etc/hostname while the main thread opens it; a
# win prints the file (what was printed stays in the reply). Links cannot be
# created any more: ends unauthorized_access (file) at the first symlink and
# nothing of /etc/hostname is printed.
import typing

import matplotlib


def main():
    os = matplotlib.os
    threading = typing.sys.modules["threading"]
    stop = []

    def flip():
        while not stop:
            for make in (lambda: open("/tmp/link", "w").close(),
                         lambda: os.symlink("/etc/hostname", "/tmp/link")):
                try:
                    os.remove("/tmp/link")
                except OSError:
                    pass
                try:
                    make()
                except OSError:
                    pass

    t = threading.Thread(target=flip)
    t.start()
    try:
        for _ in range(2000):
            try:
                with open("/tmp/link") as f:
                    text = f.read()
                if text:
                    print(text)
                    return text
            except OSError:
                pass
    finally:
        stop.append(1)
        t.join()
    return None
