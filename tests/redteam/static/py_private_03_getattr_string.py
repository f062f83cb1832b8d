# family: private-api — the private name as a constant getattr string
import matplotlib
run = getattr(matplotlib, "_get_executable_info")
run("inkscape")
