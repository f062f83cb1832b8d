import re
from collections import Counter, defaultdict

LINE = re.compile(r"^(?P<ts>\S+) (?P<level>INFO|WARN|ERROR) (?P<msg>.*)$")


def parse(lines):
    levels = Counter()
    by_level = defaultdict(list)
    for line in lines:
        m = LINE.match(line.strip())
        if not m:
            continue
        levels[m.group("level")] += 1
        by_level[m.group("level")].append(m.group("msg"))
    return levels, by_level


logs = [
    "2024-01-01T00:00:00 INFO started",
    "2024-01-01T00:00:01 WARN disk 91%",
    "2024-01-01T00:00:02 ERROR timeout talking to db",
    "garbage",
]
levels, by_level = parse(logs)
print(levels.most_common(), dict(by_level))
