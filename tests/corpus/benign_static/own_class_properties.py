from dataclasses import dataclass


class Account:
    def __init__(self, owner, balance):
        self._owner = owner
        self._balance = balance
        self._history = []

    @property
    def owner(self):
        return self._owner

    @property
    def balance(self):
        return self._balance

    def deposit(self, amount):
        self._history.append(amount)
        self._balance += amount
        return self

    def summary(self):
        return f"{self._owner}: {self._balance:.2f} ({len(self._history)} moves)"


@dataclass
class Ledger:
    accounts: list

    def richest(self):
        return max(self.accounts, key=lambda a: a.balance)


def total(accounts):
    return sum(a.balance for a in accounts)


def main(args):
    accounts = [Account(n, b) for n, b in args.get("accounts", [("ann", 10.0), ("bob", 25.5)])]
    for a in accounts:
        a.deposit(1.5)
    first = accounts[0]
    describe = [a.summary for a in accounts]
    ledger = Ledger(accounts)
    by_owner = {a.owner: a.balance for a in accounts}
    if type(first) is Account:
        by_owner["first"] = first.balance
    return {
        "total": total(accounts),
        "richest": ledger.richest().owner,
        "lines": [d() for d in describe],
        "by_owner": by_owner,
        "sorted": [a.owner for a in sorted(accounts, key=lambda a: a.balance)],
    }
