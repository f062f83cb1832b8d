# family: names-as-data — a backend name imports a module
import matplotlib
matplotlib.use("module://antigravity")
