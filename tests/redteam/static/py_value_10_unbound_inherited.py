# family: capability-by-value — the same through a subclass and a bare reference
import matplotlib

class Base:
    def go(self):
        return self._get_executable_info("gs")

class Child(Base):
    pass

f = Child.go
f(matplotlib)
