import numpy as np
import matplotlib.pyplot as plt

x = np.linspace(0, 10, 50)
rng = np.random.default_rng(1)
y = 3.2 * x + 1.5 + rng.normal(0, 1, size=x.size)
A = np.vstack([x, np.ones_like(x)]).T
(m, c), *_ = np.linalg.lstsq(A, y, rcond=None)
print(f"slope={m:.3f} intercept={c:.3f}")
plt.figure(figsize=(6, 4))
plt.scatter(x, y, s=8, alpha=0.6)
plt.plot(x, m * x + c, color="red")
plt.xlabel("x")
plt.ylabel("y")
plt.savefig("artifacts/fit.png")
