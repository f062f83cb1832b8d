name = input()
getattr(obj, name)
