var yield = 1, x = 1, g = 1;
yield /x;process.binding("spawn_sync");1/g;
