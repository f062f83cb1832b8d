# family: annotation-not-binding — an annotation does not shadow exec
exec: object
exec("print(1)")
