const EMAIL = /([\w.+-]+)@([\w-]+\.[\w.]+)/g;

function extract(text) {
  const out = [];
  for (const m of text.matchAll(EMAIL)) {
    out.push({ user: m[1], domain: m[2].toLowerCase() });
  }
  return out;
}

const domains = extract("a@x.org, B@Y.COM and c@x.org").reduce((acc, e) => {
  acc[e.domain] = (acc[e.domain] ?? 0) + 1;
  return acc;
}, {});
console.log(domains);
