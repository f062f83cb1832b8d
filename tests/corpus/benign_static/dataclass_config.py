import dataclasses
import json
from dataclasses import dataclass, field, fields


@dataclass
class Config:
    name: str = "job"
    threshold: float = 0.5
    columns: list = field(default_factory=lambda: ["a", "b"])

    @classmethod
    def from_json(cls, s: str) -> "Config":
        data = json.loads(s)
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


cfg = Config.from_json('{"threshold": 0.8, "extra": 1}')
print(dataclasses.replace(cfg, name="x"), dataclasses.asdict(cfg))
