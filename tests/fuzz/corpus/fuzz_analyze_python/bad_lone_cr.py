# ximport os
