# family: private-api — matplotlib's private helper runs a program by name
import matplotlib
print(matplotlib._get_executable_info("gs"))
