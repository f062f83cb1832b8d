import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

labels = ["Q1", "Q2", "Q3", "Q4"]
revenue = [120.5, 98.2, 143.9, 160.1]
cost = [80.0, 75.5, 90.3, 101.2]

fig, ax = plt.subplots(figsize=(8, 4))
x = range(len(labels))
ax.bar([i - 0.2 for i in x], revenue, width=0.4, label="revenue")
ax.bar([i + 0.2 for i in x], cost, width=0.4, label="cost")
ax.set_xticks(list(x))
ax.set_xticklabels(labels)
ax.set_title("Revenue vs cost")
ax.legend()
fig.tight_layout()
fig.savefig("artifacts/revenue.png", dpi=120)
plt.close(fig)
print("saved")
