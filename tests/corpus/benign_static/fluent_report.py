class Report:
    """A fluent builder: each step returns the builder."""

    def __init__(self, title):
        self._title = title
        self._rows = []
        self._sort_key = None

    def add(self, name, value):
        self._rows.append((name, value))
        return self

    def sort_by_value(self):
        self._sort_key = lambda row: row[1]
        return self

    def merge(self, other):
        if isinstance(other, Report):
            self._rows.extend(other._rows)
        return self

    def render(self):
        rows = sorted(self._rows, key=self._sort_key) if self._sort_key else self._rows
        lines = [self._title, "-" * len(self._title)]
        lines += [f"{n:<10}{v:>8.2f}" for n, v in rows]
        return "\n".join(lines)


extra = Report("extra").add("fees", 3.5)
print(Report("Q3").add("north", 120.0).add("south", 98.25).merge(extra).sort_by_value().render())
