const path = require("path");
const { URL, URLSearchParams } = require("url");

function main({ link }) {
  const u = new URL(link);
  const params = new URLSearchParams(u.search);
  params.delete("utm_source");
  u.search = params.toString();
  return { host: u.host, file: path.basename(u.pathname), ext: path.extname(u.pathname), clean: u.toString() };
}

console.log(main({ link: "https://example.org/a/report.pdf?x=1&utm_source=m" }));
