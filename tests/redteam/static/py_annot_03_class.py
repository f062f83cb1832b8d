# family: annotation-not-binding — in a class body
class A:
    eval: int
    x = eval("1")
