# family: private-api (testing) — matplotlib.testing.compare runs ghostscript/inkscape
import matplotlib.pyplot as plt
plt.matplotlib.testing.compare.convert("a.pdf", False)
