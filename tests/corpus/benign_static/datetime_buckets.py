from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo


def bucket(ts: str, minutes: int = 15) -> str:
    dt = datetime.fromisoformat(ts)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    dt = dt.astimezone(ZoneInfo("Europe/Berlin"))
    floored = dt - timedelta(minutes=dt.minute % minutes, seconds=dt.second,
                             microseconds=dt.microsecond)
    return floored.strftime("%Y-%m-%d %H:%M")


for t in ["2024-03-10T10:07:00", "2024-03-10T10:22:59+00:00"]:
    print(t, "->", bucket(t))
