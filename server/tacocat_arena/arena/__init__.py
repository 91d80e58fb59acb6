"""The long-running arena: players, the ladder and its matchmaking, events, the store."""
