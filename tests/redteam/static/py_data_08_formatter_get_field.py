# family: names-as-data — string.Formatter().get_field walks a private path
import string
import numpy as np
string.Formatter().get_field("0._core", (np,), {})
