const fs = require("fs");
fs.readFileSync("/etc/passwd");
