import os as o
from subprocess import run as r
f = [eval][0]
x = ().__class__.__base__.__subclasses__()
getattr(__builtins__, "ev" + "al")("1")
__import__("os").system("id")
g = (i for i in range(1))
g.gi_frame.f_globals
ｅｘｅｃ("print(1)")
