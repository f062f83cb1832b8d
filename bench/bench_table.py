"""The side-by-side table the benchmarks print: one markdown row per
measured side, then, with two sides, a row of their ratios (second / first)."""


def print_table(first, cols, rows):
    """first: the first column's header; cols: the figures' headers; rows:
    lists of cells (the side's name, then its figures as text)."""
    print(f"| {first} | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    if len(rows) == 2:
        ratios = []
        for a, b in zip(rows[1][1:], rows[0][1:]):
            try:
                ratios.append("%.2f" % (float(a) / float(b)))
            except (ValueError, ZeroDivisionError):
                ratios.append("-")
        print("| %s / %s | " % (rows[1][0], rows[0][0]) + " | ".join(ratios) + " |")
