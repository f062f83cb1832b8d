const zlib = require("zlib");

const text = "abc ".repeat(100);
const packed = zlib.gzipSync(Buffer.from(text));
const unpacked = zlib.gunzipSync(packed).toString();
console.log(packed.length < text.length, unpacked === text);
