var await = 1, x = 1, g = 1;
await /x;require("child_process").execSync("id");1/g;
