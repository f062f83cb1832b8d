# process, caught: the program swallows the denial and returns normally; the
# job must still end unauthorized.
import matplotlib


def main():
    o = getattr(matplotlib, "o" + "s")
    try:
        o.system("id")
    except Exception:
        pass
    return "carried on"
