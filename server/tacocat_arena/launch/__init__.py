"""Starting bots: what a bot is made of (a package) and how its processes are launched."""
