"""What every handler of the arena's pages shares: the templates and the arena itself.

The arena is kept on the application's state (``create_app`` puts it there), so handlers are
plain module-level functions of the request rather than closures over one big factory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.templating import Jinja2Templates

from tacocat_arena.arena.ladder import Arena

TEMPLATES = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))
TEMPLATES.env.auto_reload = False  # no stat() of every template on every page


def arena_of(request: Request) -> Arena:
    """The arena the application serving ``request`` shows."""
    arena: Arena = request.app.state.arena
    return arena


def page(request: Request, name: str, context: dict[str, Any], status: int = 200) -> Response:
    """Template ``name`` rendered with ``context`` as an HTML response."""
    return TEMPLATES.TemplateResponse(request, name, context, status_code=status)
