# family: names-as-data — a `.` after an index is an attribute step even when the text looks like a regular expression class
import string

import numpy as np

string.Formatter().get_field("0[a-z]._core", (np,), {})
