"""Statistics of game results: standings, Elo, duplicate pairs, SPRT, per-bot figures.

Pure functions of ``GameResult`` values; imported by tournament, report, web, arena and cli, and
importing none of them.
"""
