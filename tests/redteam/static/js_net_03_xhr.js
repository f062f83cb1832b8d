// family: network — XMLHttpRequest through an alias
const X = XMLHttpRequest;
new X();
