class Matrix:
    def __init__(self, rows):
        self._rows = [list(map(float, r)) for r in rows]
        self._shape = (len(self._rows), len(self._rows[0]) if self._rows else 0)

    @classmethod
    def identity(cls, n):
        return cls([[1 if i == j else 0 for j in range(n)] for i in range(n)])

    def __mul__(self, other):
        if not isinstance(other, Matrix):
            return Matrix([[v * other for v in r] for r in self._rows])
        if self._shape[1] != other._shape[0]:
            raise ValueError("shapes do not match")
        cols = list(zip(*other._rows))
        return Matrix([[sum(a * b for a, b in zip(r, c)) for c in cols] for r in self._rows])

    def __eq__(self, other):
        return isinstance(other, Matrix) and self._rows == other._rows

    def transpose(self):
        return Matrix(list(map(list, zip(*self._rows))))

    def __repr__(self):
        return "\n".join(" ".join(f"{v:6.2f}" for v in r) for r in self._rows)


m = Matrix([[1, 2], [3, 4]])
print(m * Matrix.identity(2) == m, m.transpose() * 2, sep="\n")
