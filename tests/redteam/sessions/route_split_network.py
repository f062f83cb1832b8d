# family: a route split over cells, for a socket. The first cell only keeps
# a reference to the socket module under a neutral name, found through an
# allowed package's attribute; the second opens a socket with it and
# swallows the error. Offline: no socket, and the job is reported.
# expect: unauthorized_access network
# ---- cell
import pandas
box = {"m": getattr(getattr(getattr(pandas, "_test" + "ing"), "_io"), "soc" + "ket")}
print("kept")
# ---- cell
try:
    s = box["m"].socket(box["m"].AF_INET, box["m"].SOCK_STREAM)
    s.connect(("127.0.0.1", 9))
    print("EFFECT")
except Exception as e:
    print("refused", type(e).__name__)
