def f(x):
    return [y async for y in x if (z := y)]
lambda: (yield)
@decorator
class A(B, metaclass=M): pass
match p:
    case {"k": [1, *rest]}: pass
