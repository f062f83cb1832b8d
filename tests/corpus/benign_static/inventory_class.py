from collections import OrderedDict
from typing import Optional


class Inventory:
    def __init__(self):
        self._items = OrderedDict()
        self._log = []

    def add(self, name: str, qty: int = 1) -> None:
        self._items[name] = self._items.get(name, 0) + qty
        self._record("add", name, qty)

    def remove(self, name: str, qty: int = 1) -> Optional[int]:
        if self._items.get(name, 0) < qty:
            return None
        self._items[name] -= qty
        if not self._items[name]:
            del self._items[name]
        self._record("remove", name, qty)
        return self._items.get(name, 0)

    def _record(self, op, name, qty):
        self._log.append((op, name, qty))

    def __len__(self):
        return len(self._items)

    def __contains__(self, name):
        return name in self._items

    def __eq__(self, other):
        return isinstance(other, Inventory) and list(self._items.items()) == list(other._items.items())


inv = Inventory()
inv.add("apple", 3)
inv.add("pear")
inv.remove("apple", 2)
print(len(inv), "pear" in inv, dict(inv._items), inv == Inventory())
