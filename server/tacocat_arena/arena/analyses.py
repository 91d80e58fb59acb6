"""Analysis on request: a player asks the arena to analyse one of its own finished games
(``play.analysis``, as ``analyze`` does, from the seat's information set alone: never the
hidden cards), and reads the result on the game's page (docs/why-lose.md).

An analysis costs seconds of CPU per decision (tens of seconds a game with the default
reference), so it never runs on the arena's loop nor beside its games at their priority:
``Analyses`` runs them one at a time in a worker process of its own, started on the first
request, at the lowest CPU priority (nice 19), which ends with the arena.  It is bounded:
one analysis queued or running per player, ``MAX_PENDING`` in all; a reference at most the
default's budget (iterations x seeds); ``MAX_REFERENCES`` references a game's seat, so what
the analyses cost and keep grows with the games, not with a player's requests.  Results are
cached by (game, seat, reference) as files in ``DIR/analysis/`` and never computed twice; a
restarted arena finds them there.
While one runs, the worker writes its progress (decisions done of all) beside it.
"""

from __future__ import annotations

import asyncio
import enum
import glob
import hashlib
import json
import logging
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tacocat_arena.engine.record import RecordError
from tacocat_arena.play.analysis import Reference, ReferenceSpecError, analyze_record
from tacocat_arena.play.decisions import seat_decisions
from tacocat_arena.tournament.executors import worker_pool

log = logging.getLogger(__name__)

#: The folder (in the arena's) of the cached analyses.
ANALYSIS_DIR = "analysis"
#: Analyses queued or running at once, over all players.
MAX_PENDING = 4
#: The worker's CPU priority (the lowest).
NICE = 19
#: The most simulations a requested reference may spend per decision (the default's).
MAX_BUDGET = Reference().iterations * Reference().seeds
#: The most references one game's seat is analysed with (cached or pending): without it a
#: player varies ``seed`` or ``uct`` for ever, each a new analysis and a new cache file.
MAX_REFERENCES = 3


class AnalysisRefused(ValueError):
    """A request the arena will not queue; ``status`` is its HTTP answer."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class State(enum.Enum):
    """Where an analysis is."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


@dataclass(frozen=True)
class Job:
    """One requested analysis: game, seat, reference, who asked, and where it is."""

    player: str
    game_id: str
    seat: int
    reference: Reference
    state: State = State.QUEUED
    error: str = ""
    requested_at: float = field(default_factory=time.time)

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.game_id, self.seat, str(self.reference))

    @property
    def pending(self) -> bool:
        return self.state in (State.QUEUED, State.RUNNING)


def parse_reference(spec: object) -> Reference:
    """A requested reference, refused (400) if it is no reference (a stranger's JSON: any
    type) or costs more than the default's budget per decision."""
    if spec is not None and not isinstance(spec, str):
        raise AnalysisRefused(
            f"a reference is a text such as {str(Reference())!r}, not {type(spec).__name__}",
            400,
        )
    try:
        reference = Reference.parse(spec)
    except ReferenceSpecError as error:
        raise AnalysisRefused(str(error), 400) from None
    if reference.iterations * reference.seeds > MAX_BUDGET:
        raise AnalysisRefused(
            f"reference {spec!r}: iterations x seeds is at most {MAX_BUDGET} on this arena "
            f"(the default, {Reference()})",
            400,
        )
    return reference


def cache_name(game_id: str, seat: int, reference: Reference) -> str:
    """The cache file's stem of one analysis (the reference as a short hash)."""
    digest = hashlib.sha256(str(reference).encode()).hexdigest()[:12]
    return f"{game_id}.s{seat}.{digest}"


def run_analysis(
    game_id: str, record: Mapping[str, Any], seat: int, spec: str, folder: Path, name: str
) -> None:
    """In the worker: analyse, writing progress to ``NAME.progress`` and the result to
    ``NAME.json`` (both replaced whole, so a reader never sees half of one)."""
    os.setpriority(os.PRIO_PROCESS, 0, NICE)
    reference = Reference.parse(spec)
    total = len(seat_decisions(record, seat))
    done = 0

    def progress(_: object) -> None:
        nonlocal done
        done += 1
        _write(folder / f"{name}.progress", {"done": done, "total": total})

    _write(folder / f"{name}.progress", {"done": 0, "total": total})
    analysis = analyze_record(record, seat, reference, progress=progress)
    _write(folder / f"{name}.json", {"game": game_id, **analysis.to_json()})
    (folder / f"{name}.progress").unlink(missing_ok=True)


def _write(path: Path, data: Mapping[str, Any]) -> None:
    partial = path.with_suffix(path.suffix + ".part")
    partial.write_text(json.dumps(data))
    os.replace(partial, path)


def _read(path: Path) -> dict[str, Any] | None:
    try:
        found = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


class Analyses:
    """The arena's analyses: the queue, its worker, the cache (see the module docstring)."""

    def __init__(self, folder: Path, max_pending: int = MAX_PENDING) -> None:
        self.folder = folder
        self.max_pending = max_pending
        self.jobs: dict[tuple[str, int, str], Job] = {}
        self._queue: asyncio.Queue[Job] | None = None
        self._runner: asyncio.Task[None] | None = None
        self._pool: Any = None
        #: The records of the queued jobs (dropped once a job starts).
        self._records: dict[tuple[str, int, str], Mapping[str, Any]] = {}

    # -- reading ------------------------------------------------------------------------------
    def result(self, game_id: str, seat: int, reference: Reference) -> dict[str, Any] | None:
        """The cached analysis, or None."""
        return _read(self.folder / f"{cache_name(game_id, seat, reference)}.json")

    def results_of(self, game_id: str) -> list[dict[str, Any]]:
        """Every cached analysis of ``game_id`` (any seat, any reference), the default
        reference's first."""
        try:
            paths = sorted(self.folder.glob(f"{game_id}.s[01].*.json"))
        except OSError:
            return []
        found = [r for r in map(_read, paths) if r is not None and r.get("game") == game_id]
        default = str(Reference())
        return sorted(found, key=lambda r: (r.get("reference") != default, r.get("seat", 0)))

    def references_of(self, game_id: str, seat: int) -> set[str]:
        """The references ``seat`` of ``game_id`` is analysed with: cached, queued or running."""
        pending = {
            j.key[2] for j in self.jobs.values() if j.pending and j.key[:2] == (game_id, seat)
        }
        try:
            paths = list(self.folder.glob(f"{glob.escape(game_id)}.s{seat}.*.json"))
        except OSError:
            paths = []
        cached = {str(r.get("reference")) for r in map(_read, paths) if r is not None}
        return pending | cached

    def status(self, job: Job) -> dict[str, Any]:
        """A job as the API shows it: its state, progress while it runs, its result once done."""
        name = cache_name(job.game_id, job.seat, job.reference)
        shown: dict[str, Any] = {
            "game": job.game_id,
            "seat": job.seat,
            "reference": str(job.reference),
            "state": job.state.value,
        }
        if job.error:
            shown["error"] = job.error
        if job.state is State.RUNNING:
            shown["progress"] = _read(self.folder / f"{name}.progress") or {"done": 0, "total": 0}
        if job.state is State.DONE:
            shown["result"] = self.result(job.game_id, job.seat, job.reference)
            shown["page"] = f"/games/{job.game_id}?analysis={job.seat}"
        return shown

    def of_player(self, player: str) -> list[Job]:
        """The player's requests since the arena started, newest first."""
        return sorted(
            (j for j in self.jobs.values() if j.player == player), key=lambda j: -j.requested_at
        )

    # -- requesting ---------------------------------------------------------------------------
    def request(
        self, player: str, game_id: str, seat: int, reference: Reference, record: Mapping[str, Any]
    ) -> Job:
        """Queue the analysis of ``seat`` of finished game ``game_id`` for ``player`` (who
        owns that seat: the caller checked), or answer from the cache or the job already
        queued; AnalysisRefused past the bounds."""
        key = (game_id, seat, str(reference))
        known = self.jobs.get(key)
        if known is not None and known.state is not State.FAILED:
            return known
        if self.result(game_id, seat, reference) is not None:
            job = Job(player, game_id, seat, reference, State.DONE)
            self.jobs[key] = job
            return job
        analysed = self.references_of(game_id, seat)
        if len(analysed) >= MAX_REFERENCES:
            raise AnalysisRefused(
                f"game {game_id} seat {seat} is analysed with {MAX_REFERENCES} references "
                f"already ({', '.join(sorted(analysed))}): ask for one of them",
                409,
            )
        mine = [j for j in self.jobs.values() if j.player == player and j.pending]
        if mine:
            raise AnalysisRefused(
                f"one analysis at a time per player: {mine[0].game_id} (seat {mine[0].seat}) "
                f"is {mine[0].state.value}; ask again once it is done",
                429,
            )
        if sum(j.pending for j in self.jobs.values()) >= self.max_pending:
            raise AnalysisRefused(
                f"the arena runs at most {self.max_pending} analyses at once (queued or "
                "running); ask again in a minute",
                429,
            )
        job = Job(player, game_id, seat, reference)
        self.jobs[key] = job
        self._records[key] = record
        self._queued().put_nowait(job)
        return job

    def _queued(self) -> asyncio.Queue[Job]:
        """The queue, its runner started on the first request (on the arena's loop)."""
        if self._queue is None or self._runner is None or self._runner.done():
            self._queue = asyncio.Queue()
            self._runner = asyncio.ensure_future(self._run(self._queue))
        return self._queue

    async def _run(self, queue: asyncio.Queue[Job]) -> None:
        """Run the queued jobs one at a time in the worker process."""
        while True:
            job = await queue.get()
            record = self._records.pop(job.key)
            self._set(replace(job, state=State.RUNNING))
            name = cache_name(job.game_id, job.seat, job.reference)
            self.folder.mkdir(parents=True, exist_ok=True)
            try:
                if self._pool is None:
                    self._pool = worker_pool(1)  # ends with the arena
                future = self._pool.submit(
                    run_analysis,
                    job.game_id,
                    dict(record),
                    job.seat,
                    str(job.reference),
                    self.folder,
                    name,
                )
                await asyncio.wrap_future(future)
            except RecordError as error:
                self._set(replace(job, state=State.FAILED, error=f"the record: {error}"))
            except Exception as error:  # a dead worker, a full disk: the job fails, not the arena
                log.warning("analysis of %s seat %d failed: %r", job.game_id, job.seat, error)
                self._set(replace(job, state=State.FAILED, error=f"the analysis failed: {error}"))
                if self._pool is not None:
                    self._pool.shutdown(wait=False, cancel_futures=True)
                    self._pool = None
            else:
                self._set(replace(job, state=State.DONE))

    def _set(self, job: Job) -> None:
        self.jobs[job.key] = job

    def close(self) -> None:
        """Stop the worker (its job is lost; nothing half-written is read as a result)."""
        if self._runner is not None:
            self._runner.cancel()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
