# family: annotation-not-binding — inside a function
def f():
    compile: type
    return compile("1", "<s>", "eval")

f()
