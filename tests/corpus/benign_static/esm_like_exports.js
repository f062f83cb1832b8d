"use strict";

const DEFAULTS = Object.freeze({ retries: 3, timeout: 10 });

function merge(base, override) {
  const out = { ...base };
  for (const [k, v] of Object.entries(override || {})) {
    if (v && typeof v === "object" && !Array.isArray(v)) out[k] = merge(out[k] || {}, v);
    else out[k] = v;
  }
  return out;
}

exports.merge = merge;
console.log(merge(DEFAULTS, { timeout: 30, nested: { y: 2 } }));
