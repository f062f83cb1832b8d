import calendar
from datetime import date, timedelta


def business_days(start: date, end: date) -> int:
    days = (end - start).days + 1
    return sum(1 for i in range(days) if (start + timedelta(days=i)).weekday() < 5)


year, month = 2024, 2
_, last = calendar.monthrange(year, month)
print(calendar.month_name[month], last, business_days(date(year, month, 1), date(year, month, last)))
print(calendar.TextCalendar(calendar.MONDAY).formatmonth(year, month))
