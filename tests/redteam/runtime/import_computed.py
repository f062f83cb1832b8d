# import: a module outside the allow-list imported by a computed name through
# an importlib that an allowed package holds.
import matplotlib


def main():
    il = getattr(matplotlib, "import" + "lib")
    return il.import_module("sub" + "process").run(["id"], capture_output=True).stdout.decode()
