// family: stack-trace-hook — spelled by concatenation
Error["prepare" + "StackTrace"] = (e, s) => s;
