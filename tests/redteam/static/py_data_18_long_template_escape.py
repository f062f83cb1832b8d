# family: names-as-data — a long format template hides its `.` as an escape; it is decoded before its fields are read
f = lambda: 0
t = "{0\x2e__globals__}                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                   "
t.format(f)
