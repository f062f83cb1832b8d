# executors: sources and targets are added here
