# family: the guard switched off in one cell, used in the next. The first cell
# tries every handle on the in-process layer a cell can reach without an
# import the gate refuses (builtins' __import__, an audit hook of its own,
# sys.modules, sys.audit) and swallows each refusal; the second imports and runs what the gate
# refuses. Nothing the first cell did may hold for the second. Seen: the
# first cell's audit hook is reported (reflection), but its replaced
# builtins.__import__ stays for the second cell, whose import then passes the
# in-process gate; the kernel filter kills the process at the spawn
# (process_or_network), so no process runs. Either stop passes.
# expect: unauthorized_access
# ---- cell
import typing
sys = getattr(typing, "sy" + "s")
b = __builtins__ if isinstance(__builtins__, dict) else vars(__builtins__)
tried = []
for attempt in (
        lambda: b.__setitem__("__import__", sys.modules["importlib"].__import__),
        lambda: sys.addaudithook(lambda *a: None),
        lambda: sys.modules.pop("runtime_guard", None),
        lambda: setattr(sys, "audit", lambda *a: None),
):
    try:
        attempt()
        tried.append("done")
    except Exception as e:
        tried.append(type(e).__name__)
print(tried)
# ---- cell
try:
    sp = __import__("sub" + "process")
    print("EFFECT", sp.run(["id"], capture_output=True).stdout)
except Exception as e:
    print("refused", type(e).__name__)
