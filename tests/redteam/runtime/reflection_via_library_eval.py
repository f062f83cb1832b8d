# reflection laundered through an allowed library's eval: typing evaluates a
# forward reference (a string the job chose) in its own frame; the evaluated
# code walks to the runner's frames. Code compiled from a string is the
# job's, whoever compiles it: ends unauthorized_access (reflection).
import typing


def main():
    ref = typing.ForwardRef("sys._getframe(0).f_back.f_back.f_globals", is_argument=False)
    return sorted(ref._evaluate({"sys": typing.sys}, {}, frozenset()))[:3]
