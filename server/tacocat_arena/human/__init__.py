"""A person's seat: a person plays a bot in the browser, as a client of the referee like any
bot (docs/human-seat.md).  ``relay`` holds what the page may show and which answers it may
send, ``client`` the seat's gRPC stream to the referee, ``page`` the Starlette page (SSE +
POST), ``local`` the match of ``tacocat-arena play human BOT``."""
