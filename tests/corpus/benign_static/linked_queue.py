class _Node:
    __match_args__ = ("value",)

    def __init__(self, value):
        self.value = value
        self._next = None


class Queue:
    """A FIFO queue on a singly linked list."""

    def __init__(self):
        self._head = None
        self._tail = None
        self._size = 0

    def push(self, value):
        node = _Node(value)
        if self._tail is None:
            self._head = node
        else:
            self._tail._next = node
        self._tail = node
        self._size += 1

    def pop(self):
        node = self._head
        if node is None:
            raise IndexError("pop from an empty queue")
        self._head = node._next
        if self._head is None:
            self._tail = None
        self._size -= 1
        return node.value

    def __iter__(self):
        node = self._head
        while node is not None:
            yield node.value
            node = node._next

    def __len__(self):
        return self._size


q = Queue()
for word in "the quick brown fox".split():
    q.push(word)
q.pop()
print(list(q), len(q))
