const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const stdev = (xs) => {
  const mu = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - mu) ** 2, 0) / (xs.length - 1));
};

const data = Array.from({ length: 20 }, (_, i) => Math.round(Math.sin(i) * 100) / 10);
console.log({ mean: mean(data).toFixed(3), median: median(data), sd: stdev(data).toFixed(3) });
