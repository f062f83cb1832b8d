class _Leaf:
    def __init__(self, key, value):
        self.key, self.value = key, value
        self._left = None
        self._right = None


class SearchTree:
    def __init__(self):
        self._root = None
        self._count = 0

    def insert(self, key, value):
        if self._root is None:
            self._root = _Leaf(key, value)
            self._count = 1
            return
        node = self._root
        while True:
            if key < node.key:
                if node._left is None:
                    node._left = _Leaf(key, value)
                    break
                node = node._left
            elif key > node.key:
                if node._right is None:
                    node._right = _Leaf(key, value)
                    break
                node = node._right
            else:
                node.value = value
                return
        self._count += 1

    def get(self, key, default=None):
        node = self._root
        while node is not None:
            if key == node.key:
                return node.value
            node = node._left if key < node.key else node._right
        return default


t = SearchTree()
for k, v in [(5, "e"), (2, "b"), (8, "h"), (1, "a")]:
    t.insert(k, v)
print(t.get(1), t.get(8), t.get(7, "-"), t._count)
