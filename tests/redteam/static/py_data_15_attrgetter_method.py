# family: names-as-data — attrgetter takes the method unbound
import matplotlib
import operator
class A:
    def go(self):
        return self._get_executable_info("gs")
operator.attrgetter("go")(A)(matplotlib)
