const cp = require("node:child_process");
