// a doEvil()
