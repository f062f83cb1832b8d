# matplotlib (Agg): fonts, a figure, a PNG artifact.
import matplotlib.pyplot as plt


def main():
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [3, 1, 2], label="line")
    ax.set_title("benign")
    ax.legend()
    fig.savefig("artifacts/plot.png")
    return "ok"
