# a route split over a session's cells (each cell is one element of CELLS):
# the first cell only takes a reference to os.fork under a neutral name (an
# allowed package's attribute) and tries to switch the guard off, the second
# uses it and swallows the error. Nothing the first cell did may switch
# anything off for the second.
CELLS = [
    "import matplotlib\n"
    "f = getattr(getattr(matplotlib, 'o' + 's'), 'fo' + 'rk')\n"
    "try:\n    getattr(matplotlib, 'sy' + 's').addaudithook(lambda *a: None)\n"
    "except Exception:\n    pass\n",
    "try:\n    pid = f()\n    if pid == 0:\n        raise SystemExit(0)\n    print('EFFECT')\n"
    "except OSError:\n    pass\n",
]
