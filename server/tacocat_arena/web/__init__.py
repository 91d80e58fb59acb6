"""The arena's web page and JSON API, served on the arena's own loop."""
