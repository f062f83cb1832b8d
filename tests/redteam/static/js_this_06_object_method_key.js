// family: computed-key-scope — an object-literal method key at module level
const o = { [arguments[1]("fs").readFileSync("/etc/hostname")]() { return 1; } };
