import numpy as np
import matplotlib.pyplot as plt

img = np.zeros((64, 64), dtype=np.float32)
yy, xx = np.mgrid[0:64, 0:64]
img += np.exp(-((xx - 32) ** 2 + (yy - 20) ** 2) / 50.0)
img = np.clip(img + 0.05 * np.random.default_rng(3).standard_normal(img.shape), 0, 1)
plt.imsave("artifacts/blob.png", img, cmap="viridis")
print(img.shape, round(float(img.max()), 3))
