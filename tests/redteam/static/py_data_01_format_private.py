# family: names-as-data — a format field walks into a private name
import matplotlib
print("{0._get_executable_info}".format(matplotlib))
