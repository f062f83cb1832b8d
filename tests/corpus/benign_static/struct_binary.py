import struct
import io

buf = io.BytesIO()
for rec in [(1, 2.5, b"ab"), (2, -1.0, b"cd")]:
    buf.write(struct.pack("<if2s", *rec))
raw = buf.getvalue()
size = struct.calcsize("<if2s")
out = [struct.unpack_from("<if2s", raw, off) for off in range(0, len(raw), size)]
print(out)
