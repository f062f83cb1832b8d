from datetime import datetime, timedelta
from itertools import groupby

events = [
    ("u1", "2024-01-01T10:00"), ("u1", "2024-01-01T10:10"), ("u1", "2024-01-01T12:00"),
    ("u2", "2024-01-01T09:00"),
]
GAP = timedelta(minutes=30)
sessions = {}
for user, evs in groupby(sorted(events), key=lambda e: e[0]):
    times = [datetime.fromisoformat(t) for _, t in evs]
    count, last = 1, times[0]
    for t in times[1:]:
        if t - last > GAP:
            count += 1
        last = t
    sessions[user] = count
print(sessions)
