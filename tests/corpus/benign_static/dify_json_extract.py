import json


def main(text: str) -> dict:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return {"result": "", "error": "invalid json"}
    items = data.get("items", [])
    names = [it.get("name", "").strip() for it in items if isinstance(it, dict)]
    return {"result": ", ".join(n for n in names if n), "count": len(names)}
