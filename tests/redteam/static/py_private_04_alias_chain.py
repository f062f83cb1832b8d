# family: private-api — private subprocess helper through an aliased submodule
import matplotlib.cbook as cb
f = cb._check_and_log_subprocess
f(["id"], None)
