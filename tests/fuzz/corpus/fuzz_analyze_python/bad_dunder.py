x = ().__class__.__base__.__subclasses__()
