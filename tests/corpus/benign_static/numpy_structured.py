import numpy as np

dt = np.dtype([("name", "U10"), ("age", "i4"), ("score", "f8")])
people = np.array([("ann", 31, 88.5), ("bob", 25, 92.0), ("cy", 40, 75.25)], dtype=dt)
people.sort(order="score")
print(people["name"].tolist(), people[people["age"] > 30]["score"].mean())
print(np.unique(np.array([3, 1, 3, 2]), return_counts=True))
