"""What every handler of the arena's pages shares: the templates and the arena itself.

The arena is kept on the application's state (``create_app`` puts it there), so handlers are
plain module-level functions of the request rather than closures over one big factory.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import Response
from starlette.templating import Jinja2Templates

from tacocat_arena.arena.ladder import Arena
from tacocat_arena.report import FAVICON
from tacocat_arena.report.templating import static_text

TEMPLATES = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))
TEMPLATES.env.auto_reload = False  # no stat() of every template on every page


def _static(name: str) -> Markup:
    """A file of ``static/`` as markup to inline (our own code, not user input)."""
    return Markup(resources.files("tacocat_arena.web").joinpath("static", name).read_text("utf-8"))


# Every page is one response: its style, script and icon are inlined (no further request,
# nothing fetched from elsewhere), the report's common.css first so both look alike.
TEMPLATES.env.globals.update(
    favicon=FAVICON,
    common_css=static_text("common.css"),
    arena_css=_static("arena.css"),
    arena_js=_static("arena.js"),
    desk_js=_static("desk.js"),
)


def arena_of(request: Request) -> Arena:
    """The arena the application serving ``request`` shows."""
    arena: Arena = request.app.state.arena
    return arena


def page(request: Request, name: str, context: dict[str, Any], status: int = 200) -> Response:
    """Template ``name`` rendered with ``context`` as an HTML response."""
    return TEMPLATES.TemplateResponse(request, name, context, status_code=status)
