# family: input files are code. A file uploaded into the session's workspace
# between cells, named like an allowed module and like a helper, then imported
# by name and loaded by path in the next cells. The workspace is not on the
# import path (the real json comes back), and a file the job loads by path
# runs as the job's own code under the same gate: its import of a refused
# module ends the job.
# expect: unauthorized_access import
# ---- file json.py
print("EFFECT json")
def dumps(*a, **k):
    return "shadowed"
# ---- file helper.py
import subprocess
print("EFFECT helper", subprocess.run(["id"], capture_output=True).stdout)
# ---- cell
import json
print(json.dumps([1]))
# ---- cell
try:
    import helper
except ImportError as e:
    print("no helper on the path")
# ---- cell
import importlib.util
spec = importlib.util.spec_from_file_location("helper", "/workspace/helper.py")
importlib.util.module_from_spec(spec)
spec.loader.exec_module(importlib.util.module_from_spec(spec))
