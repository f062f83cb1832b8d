# images: sources and targets are added here
