const path = require("path");
module.exports = function main(input) {
  return path.join("a", String(input.length));
};
