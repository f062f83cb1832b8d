# native_code: no ctypes at all -- sqlite3 (allowed by the permissive
# policy) loads a shared object of the caller's choosing as an "extension";
# here a copy of an image library written to /tmp. EFFECT: it is mapped.
import sqlite3

LIB = "/usr/lib/x86_64-linux-gnu/libanl.so.1"


def main():
    with open(LIB, "rb") as src, open("/tmp/ext.so", "wb") as dst:
        dst.write(src.read())
    db = sqlite3.connect(":memory:")
    try:
        db.enable_load_extension(True)
        db.load_extension("/tmp/ext.so")
    except sqlite3.OperationalError:
        pass
    with open("/proc/self/maps") as maps:
        if "/tmp/ext.so" in maps.read():
            print("EFFECT")
