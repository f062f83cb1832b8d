class O:
    size = 3

obj = O()
n = getattr(obj, "si" + "ze")
m = f.__name__ if (f := main) else None
