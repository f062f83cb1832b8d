const crypto = require("crypto");
const { Buffer } = require("buffer");

function main({ text }) {
  const hash = crypto.createHash("sha256").update(text, "utf8").digest("hex");
  const hmac = crypto.createHmac("sha256", "k").update(text).digest("base64");
  const b64 = Buffer.from(text, "utf8").toString("base64");
  return { hash, hmac, b64, id: crypto.randomUUID() };
}

console.log(main({ text: "hello" }));
module.exports = { main };
