class Counter:
    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
            cls._instance._count = 0
        return cls._instance

    def incr(self):
        self._count += 1
        return self._count


a, b = Counter(), Counter()
a.incr()
print(b.incr(), a is b)
