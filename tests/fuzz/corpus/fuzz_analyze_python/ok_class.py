class Acc:
    def __init__(self):
        super().__init__()
        self.total = 0

    def add(self, x, *, scale=1):
        self.total += x * scale
        return self

def main():
    return Acc().add(2, scale=3).total
