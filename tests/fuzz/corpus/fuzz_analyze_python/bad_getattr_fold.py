getattr(obj, "__cla" + "ss__")
