# family: names-as-data — str.strip with characters was folded as if it had none: the name that reaches getattr is __globals__
f = lambda: 0
getattr(f, "x__globals__x".strip("x"))
