from dataclasses import dataclass, field, asdict
from datetime import datetime
from typing import List, Optional


@dataclass
class LineItem:
    sku: str
    qty: int
    price: float

    @property
    def total(self) -> float:
        return self.qty * self.price


@dataclass
class Order:
    order_id: str
    created: datetime
    items: List[LineItem] = field(default_factory=list)
    note: Optional[str] = None

    def __post_init__(self):
        if not self.order_id:
            raise ValueError("order_id is required")

    @property
    def total(self) -> float:
        return round(sum(i.total for i in self.items), 2)


o = Order("A-1", datetime(2024, 5, 1, 12, 30), [LineItem("x", 2, 3.5), LineItem("y", 1, 10.0)])
d = asdict(o)
d["created"] = o.created.isoformat()
print(d, o.total)
