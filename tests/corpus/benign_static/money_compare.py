from functools import total_ordering


@total_ordering
class Money:
    def __init__(self, cents, currency="EUR"):
        self._cents = int(cents)
        self._currency = currency

    def __eq__(self, other):
        if not isinstance(other, Money):
            return NotImplemented
        return (self._cents, self._currency) == (other._cents, other._currency)

    def __lt__(self, other):
        if not isinstance(other, Money):
            return NotImplemented
        if self._currency != other._currency:
            raise ValueError("different currencies")
        return self._cents < other._cents

    def __add__(self, other):
        if isinstance(other, Money) and other._currency == self._currency:
            return Money(self._cents + other._cents, self._currency)
        return NotImplemented

    def __hash__(self):
        return hash((self._cents, self._currency))

    def __repr__(self):
        return f"{self._cents / 100:.2f} {self._currency}"


def main(amounts):
    items = sorted(Money(a) for a in amounts)
    total = sum(items[1:], items[0]) if items else Money(0)
    return {"min": repr(items[0]), "max": repr(max(items)), "total": repr(total)}


print(main([1250, 399, 10000]))
