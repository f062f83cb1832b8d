# family: code made by a library. The import system's own unmarshalling
# (importlib's _compile_bytecode, an already-loaded module reached through an
# allowed module's attribute) is handed the job's bytes: a code object whose
# file name is a library's would pass for library code, and its frames'
# reflection and imports would go unchecked. A library may unmarshal code
# only from a library's .pyc file, with that file's own bytes: this ends
# unauthorized_access (reflection) at the unmarshal.
# The bytes: marshal.dumps(compile("import sys\nFRAME = sys._getframe(0)\n",
#     "/usr/lib/python3.11/json/__init__.py", "exec")) under Python 3.11.
import typing

CODE = bytes.fromhex(
    "e30000000000000000000000000300000000000000f32e0000009700640064016c005a00"
    "020065006a0100000000000000006400a6010000ab0100000000000000005a0264015300"
    "2902e9000000004e2903da03737973da095f6765746672616d65da054652414d45a900f3"
    "00000000fa242f7573722f6c69622f707974686f6e332e31312f6a736f6e2f5f5f696e69"
    "745f5f2e7079fa083c6d6f64756c653e7209000000010000007323000000f003010101d8"
    "000a800a800a800ad8081588038c0d9061d10818d408188005800580057207000000")


def main():
    sys = getattr(typing, "s" + "ys")
    external = sys.modules["importlib._bootstrap_external"]
    code = external._compile_bytecode(CODE, name="json")
    namespace = {}
    sys.modules["importlib._bootstrap"]._call_with_frames_removed(exec, code, namespace)
    return "escaped: " + str(namespace["FRAME"])
