# family: private-api — attrgetter with a private path
import operator
import matplotlib
operator.attrgetter("_get_executable_info")(matplotlib)("gs")
