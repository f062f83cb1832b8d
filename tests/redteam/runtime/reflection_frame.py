# reflection: a frame walk through sys reached as an allowed module's attribute.
import typing


def main():
    s = getattr(typing, "s" + "ys")
    return sorted(s._getframe(1).f_globals)[:3]
