# process: a module reached as an attribute of an allowed package, then
# handed through a function, so no spelling says "subprocess".
import matplotlib


def pick(m, name):
    return getattr(m, name)


def main():
    sp = pick(matplotlib, "sub" + "process")
    return sp.run(["id"], capture_output=True).stdout.decode()
