# threads (permissive policy: threading is not on default's list).
import threading


def main():
    out = []
    ts = [threading.Thread(target=out.append, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return sorted(out)
