"""The protocol layer: engine values <-> protobuf messages (``wire``); the generated code is
``tacocat.v1``."""
