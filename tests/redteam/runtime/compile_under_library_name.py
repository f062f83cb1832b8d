# the job's source compiled under a library's file name by the library's own
# loader (importlib's source_to_code, reached as an attribute of matplotlib):
# code that claims a library file is taken for library code. A library may
# compile a library file name only with that file's bytes: ends
# unauthorized_access (reflection).
import matplotlib


def main():
    boot = matplotlib.importlib.machinery.SourceFileLoader
    code = boot.source_to_code(None, b"import os\nos.system('id')\n",
                               "/usr/lib/python3.11/os.py")
    return str(type(code))
