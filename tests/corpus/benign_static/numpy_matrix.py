import numpy as np

a = np.arange(1, 10, dtype=float).reshape(3, 3) + np.eye(3)
b = np.array([1.0, 2.0, 3.0])
x = np.linalg.solve(a, b)
w, v = np.linalg.eigh(a @ a.T)
norm = np.linalg.norm(a, ord="fro")
mask = np.where(a > 4, 1, 0)
print(np.allclose(a @ x, b), np.round(w, 3), round(float(norm), 3), mask.sum(axis=0))
np.save("artifacts/a.npy", a)
back = np.load("artifacts/a.npy")
print(np.array_equal(a, back))
np.savetxt("artifacts/a.csv", a, delimiter=",", fmt="%.2f")
