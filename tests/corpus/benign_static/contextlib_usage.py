import contextlib
import io
import json


@contextlib.contextmanager
def capture():
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        yield buf


with capture() as out:
    print(json.dumps({"ok": True}))
print("captured:", out.getvalue().strip())
with contextlib.suppress(KeyError):
    {}["missing"]
