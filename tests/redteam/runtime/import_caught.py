# import, caught: a computed import through an importlib an allowed package
# holds, the ImportError swallowed.
import matplotlib


def main():
    il = getattr(matplotlib, "import" + "lib")
    try:
        il.import_module("sub" + "process")
    except ImportError:
        pass
    return "carried on"
