def g():
    yield 1

h = g()
h.gi_frame.f_globals
