# family: private-api — the private helper imported by name
from matplotlib import _get_executable_info
_get_executable_info("dvipng")
