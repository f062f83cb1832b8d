import re
from typing import Any, Dict, List

EMAIL = re.compile(r"^[\w.+-]+@[\w-]+\.[\w.]+$")


def validate(row: Dict[str, Any]) -> List[str]:
    errors = []
    if not isinstance(row.get("age"), int) or not 0 <= row["age"] < 150:
        errors.append("age")
    if not EMAIL.match(str(row.get("email", ""))):
        errors.append("email")
    return errors


def main(rows: List[Dict[str, Any]]) -> dict:
    bad = {i: e for i, r in enumerate(rows) if (e := validate(r))}
    return {"valid": len(rows) - len(bad), "errors": bad}


print(main([{"age": 3, "email": "a@b.co"}, {"age": -1, "email": "nope"}]))
