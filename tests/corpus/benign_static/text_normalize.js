const { StringDecoder } = require("string_decoder");

function normalize(s) {
  return s
    .normalize("NFKC")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/\s+/g, " ")
    .trim()
    .toLowerCase();
}

const dec = new StringDecoder("utf8");
const text = dec.write(Buffer.from("Caf\u00e9   ＡＢＣ  ", "utf8")) + dec.end();
console.log(normalize(text), encodeURIComponent("a b&c"));
