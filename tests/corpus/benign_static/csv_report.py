import csv
import io
import statistics


def main(data: str) -> dict:
    reader = csv.DictReader(io.StringIO(data))
    scores = {}
    for row in reader:
        try:
            scores.setdefault(row["team"], []).append(float(row["score"]))
        except (KeyError, ValueError):
            continue
    report = {
        team: {"mean": statistics.mean(v), "median": statistics.median(v), "n": len(v)}
        for team, v in scores.items()
    }
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["team", "mean", "median", "n"])
    for team, r in sorted(report.items()):
        w.writerow([team, "{:.2f}".format(r["mean"]), r["median"], r["n"]])
    return {"result": out.getvalue()}


print(main("team,score\na,1\na,3\nb,2\n"))
