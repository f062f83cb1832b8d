// family: network — fetch is the network
fetch("http://127.0.0.1:9/").then((r) => r.text());
