// family: network — WebSocket
const ws = new WebSocket("ws://127.0.0.1:9/");
