import pandas as pd


def main(records: list) -> dict:
    df = pd.DataFrame.from_records(records)
    if df.empty:
        return {"result": ""}
    df.columns = [str(c).strip().replace("_", " ").title() for c in df.columns]
    lines = ["| " + " | ".join(df.columns) + " |", "|" + "---|" * len(df.columns)]
    for _, row in df.iterrows():
        lines.append("| " + " | ".join(str(v) for v in row.tolist()) + " |")
    return {"result": "\n".join(lines)}


print(main([{"first_name": "a", "score": 1}, {"first_name": "b", "score": 2}]))
