import re
from collections import Counter, deque


def main(text: str, k: int = 5) -> dict:
    words = re.findall(r"[a-z']+", text.lower())
    vocab = Counter(words)
    window = deque(maxlen=3)
    trigrams = Counter()
    for w in words:
        window.append(w)
        if len(window) == 3:
            trigrams[" ".join(window)] += 1
    return {"top": vocab.most_common(k), "trigrams": trigrams.most_common(2)}


print(main("the cat sat on the mat and the cat ran"))
