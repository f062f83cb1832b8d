from dataclasses import dataclass, field
from typing import Dict, List


@dataclass(order=True)
class Item:
    sku: str
    qty: int = 0
    tags: List[str] = field(default_factory=list)


@dataclass
class Warehouse:
    name: str
    items: Dict[str, Item] = field(default_factory=dict)

    def __post_init__(self):
        self._log = []

    def receive(self, sku, qty):
        item = self.items.setdefault(sku, Item(sku))
        item.qty += qty
        self._log.append(("in", sku, qty))

    def same_stock(self, other):
        if not isinstance(other, Warehouse):
            return False
        return sorted(self.items.values()) == sorted(other.items.values())


w = Warehouse("main")
w.receive("A-1", 5)
w.receive("B-2", 2)
v = Warehouse("copy")
v.receive("B-2", 2)
v.receive("A-1", 5)
print(w.same_stock(v), sorted(w.items), len(w._log))
