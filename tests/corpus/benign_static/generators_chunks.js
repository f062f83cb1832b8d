function* chunks(arr, size) {
  for (let i = 0; i < arr.length; i += size) yield arr.slice(i, i + size);
}

let total = 0;
for (const part of chunks([...Array(23).keys()], 5)) total += part.reduce((a, b) => a + b, 0);
console.log(total, [...chunks([1, 2, 3], 2)].length);
