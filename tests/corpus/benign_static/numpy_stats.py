import numpy as np


def describe(values):
    arr = np.asarray(values, dtype=float)
    arr = arr[~np.isnan(arr)]
    if arr.size == 0:
        return {}
    q1, med, q3 = np.percentile(arr, [25, 50, 75])
    return {
        "mean": float(arr.mean()),
        "std": float(arr.std(ddof=1)) if arr.size > 1 else 0.0,
        "median": float(med),
        "iqr": float(q3 - q1),
        "min": float(arr.min()),
        "max": float(arr.max()),
    }


rng = np.random.default_rng(42)
sample = rng.normal(loc=10.0, scale=2.0, size=500)
print(describe(sample))
counts, edges = np.histogram(sample, bins=10)
print(counts.tolist(), np.round(edges, 2).tolist())
