name = "w"
width = 8
msg = f"{name!r:>{width}} {1 + 2=} {{lit}}"
b = rb"\d+" + b"\x00"
s = u"caf\u00e9" "x" 'y'
