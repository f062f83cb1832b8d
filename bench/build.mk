# bench: sources and targets are added here
