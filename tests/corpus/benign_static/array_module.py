import array
import cmath
import math

a = array.array("d", [1.0, 4.0, 9.0])
print([math.sqrt(x) for x in a], cmath.sqrt(-1), math.isclose(0.1 + 0.2, 0.3))
