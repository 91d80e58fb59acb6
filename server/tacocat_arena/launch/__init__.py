"""Starting bots: bot specs, built-in bots, what a bot is made of (a package), bot processes,
the sandbox and its limits.

Imported by tournament/, check/ and arena/; imports only the referee (peer checks).
"""
