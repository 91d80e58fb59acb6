"""In-process play over the engine: reference policies, the local game loop, narration of a
record. No I/O beyond what the caller passes in."""
