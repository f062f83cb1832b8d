def main(rows):
    x = 1
   s = (r._p for r in rows)
