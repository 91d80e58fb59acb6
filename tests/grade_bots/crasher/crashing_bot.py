"""A bot for the grader's tests that crashes before it connects."""

raise SystemExit("crashing_bot: an uncaught error at start-up")
