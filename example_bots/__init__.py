"""The example bots; each module is also a runnable script (python example_bots/NAME.py)."""
