// family: stack-trace-hook — a class's computed static key built by a template
class A { static [`${"prepare"}StackTrace`](e, s) { return s; } }
