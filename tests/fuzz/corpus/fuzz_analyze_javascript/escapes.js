const cp = require("child_process");
const m = require(name);
import("fs").then(fs => fs.readFileSync("/etc/passwd"));
[].constructor.constructor("return process")().exit();
const f = Function; globalThis["ev" + "al"]("1");
\u0065val("2");
obj.__proto__.polluted = 1;
process.binding("spawn_wrap");
