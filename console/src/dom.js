// dom.js - building the page: elements and text only, never HTML strings.
// Everything that comes from the API or from a job (output, code, names,
// messages) becomes a text node, so `<img src=x onerror=...>` printed by a
// job shows as those characters.

/** h('div', {class: 'x', onclick: fn, 'data-id': 3}, 'text', child, [more]) */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'value') el.value = v;
    else if (k === 'checked') el.checked = !!v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

/** A <select> of options ([value, label] or value). */
export function select(attrs, options, current) {
  const s = h('select', attrs);
  for (const o of options) {
    const [value, label] = Array.isArray(o) ? o : [o, o === '' ? 'any' : o];
    const opt = h('option', { value }, label);
    if (value === current) opt.selected = true;
    s.appendChild(opt);
  }
  return s;
}

export function fmtMs(v) {
  return typeof v === 'number' ? `${v.toFixed(v < 10 ? 2 : 0)} ms` : '';
}
