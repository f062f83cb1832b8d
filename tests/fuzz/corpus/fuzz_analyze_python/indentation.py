if x:
	if y:
	    a = 1
        b = 2
       	c = 3
