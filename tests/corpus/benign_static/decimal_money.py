from decimal import Decimal, ROUND_HALF_UP
from fractions import Fraction


def split_bill(total: str, people: int):
    amount = Decimal(total)
    share = (amount / people).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    remainder = amount - share * people
    shares = [share] * people
    shares[0] += remainder
    return [str(s) for s in shares]


print(split_bill("100.00", 3), Fraction(3, 9) + Fraction(1, 3))
