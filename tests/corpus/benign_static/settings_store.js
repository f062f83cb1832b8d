const settings = {
  values: { theme: 'light', pageSize: 20 },
  listeners: [],
  get(key) {
    return this.values[key];
  },
  set(key, value) {
    const old = this.values[key];
    this.values[key] = value;
    this.listeners.forEach((fn) => fn(key, old, value));
    return this;
  },
  onChange(fn) {
    this.listeners.push(fn);
    return this;
  },
};

function main(args) {
  const changes = [];
  settings.onChange((k, a, b) => changes.push(`${k}: ${a} -> ${b}`));
  settings.set('theme', args.theme || 'dark').set('pageSize', 50);
  return { changes, theme: settings.get('theme'), keys: Object.keys(settings.values) };
}
module.exports = { main };
