# family: names-as-data — Formatter.vformat with a computed template
import string
import numpy as np
t = "{0." + "".join(["_", "core"]) + "}"
string.Formatter().vformat(t, (np,), {})
