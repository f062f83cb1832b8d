process.binding("spawn_sync");
globalThis.process;
