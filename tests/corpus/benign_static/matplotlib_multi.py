import numpy as np
import matplotlib.pyplot as plt

plt.style.use("ggplot")
data = {"alpha": np.random.default_rng(0).normal(0, 1, 200), "beta": np.random.default_rng(1).normal(1, 2, 200)}
fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
for ax, (name, values) in zip(axes, data.items()):
    ax.hist(values, bins=20, color="steelblue", edgecolor="white")
    ax.axvline(values.mean(), color="k", linestyle="--")
    ax.set_title(name)
    ax.grid(True, alpha=0.3)
fig.suptitle("Distributions")
fig.savefig("artifacts/hist.png", bbox_inches="tight")
plt.close("all")
