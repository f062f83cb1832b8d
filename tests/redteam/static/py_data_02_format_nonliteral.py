# family: names-as-data — a format template built at run time
import numpy as np
parts = ["{0.", "_co", "re}"]
tmpl = "".join(p for p in parts)
print(tmpl.format(np))
