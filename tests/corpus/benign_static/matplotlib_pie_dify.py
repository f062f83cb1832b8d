import io
import base64
import matplotlib
matplotlib.use("Agg")
from matplotlib import pyplot as plt


def main(labels: list, values: list) -> dict:
    fig, ax = plt.subplots()
    ax.pie(values, labels=labels, autopct="%1.1f%%", startangle=90)
    ax.axis("equal")
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return {"image": base64.b64encode(buf.getvalue()).decode()}


print(len(main(["a", "b"], [1, 2])["image"]) > 0)
