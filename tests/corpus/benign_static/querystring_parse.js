const querystring = require("querystring");

const parsed = querystring.parse("a=1&b=two&b=three&c=");
const cleaned = Object.fromEntries(Object.entries(parsed).filter(([, v]) => v !== ""));
console.log(cleaned, querystring.stringify({ x: [1, 2], y: "z w" }));
