from typing import Dict, List

WEIGHTS: Dict[str, float] = {"quality": 0.5, "price": 0.3, "speed": 0.2}


def score(item: Dict[str, float]) -> float:
    return sum(WEIGHTS[k] * item.get(k, 0.0) for k in WEIGHTS)


def main(items: List[Dict[str, float]]) -> dict:
    ranked = sorted(items, key=score, reverse=True)
    return {"best": ranked[0] if ranked else None, "scores": [round(score(i), 3) for i in ranked]}


print(main([{"quality": 0.9, "price": 0.2}, {"quality": 0.5, "speed": 1.0}]))
