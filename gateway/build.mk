# gateway: sources and targets are added here
