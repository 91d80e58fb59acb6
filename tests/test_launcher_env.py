"""A stranger's variables never reach the launcher (issue 34, point 1).

A package's ``[env]`` (or a config's ``env``) used to be the environment of ``sh``,
``setpriv``, ``prlimit`` and ``bwrap`` themselves, which run as the organizer (root, perhaps)
before any namespace exists: ``LD_PRELOAD`` of a ``.so`` in the package ran on the host as
root.  Now the launcher runs with ``sandbox.LAUNCHER_ENV`` and the bot's variables reach its
own process only; the loader's and interpreters' variables are refused by name at parse time.

The probe is a real shared object, compiled here (skipped without gcc), whose constructor
appends a line to a host file (``outside.log``, unreachable from a sandbox, whose /tmp is its
own), to ``inside.log`` in its working folder (a build's, writable), and to stderr (the log).
Every path is run as real processes: the launcher with a variable slipped past the parser
(defence in depth), the gate's build and check and hosted games over real uploads (``submit``
in this process), ``run`` and ``grade --batch`` (in 4 games a student) through the real CLI.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from arena_support import ArenaProcess, add_players, start_arena, submit_in_process, wait_until
from grade_support import few_games_rubric

from tacocat_arena.launch import sandbox
from tacocat_arena.launch.bots import BotProcess, Launch
from tacocat_arena.launch.build import build_package
from tacocat_arena.launch.package import BotPackage, PackageError, parse_manifest
from tacocat_arena.launch.sandbox import LAUNCHER_ENV, Limits, SandboxMode, env_refusal
from tacocat_arena.launch.spec import BotSpec, ConfigError
from tacocat_arena.tournament.config import load_config

REPO = Path(__file__).resolve().parent.parent
GREEDY = REPO / "example_bots" / "packages" / "python-greedy"
RANDOM = REPO / "example_bots" / "packages" / "python-random"

_PROBE = r"""
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void note(const char *path, const char *line) {
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0666);
    if (fd >= 0) { write(fd, line, strlen(line)); close(fd); }
}

__attribute__((constructor)) static void probe(void) {
    char exe[512] = {0}, host[64] = {0}, line[700];
    if (readlink("/proc/self/exe", exe, sizeof exe - 1) < 0) strcpy(exe, "?");
    gethostname(host, sizeof host - 1);
    snprintf(line, sizeof line, "preloaded: %s uid %d host %s\n", exe, (int)getuid(), host);
    note(OUTSIDE, line);
    note("inside.log", line);
    write(2, line, strlen(line));
}
"""


@pytest.fixture(scope="module")
def compiled_probe(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The probe compiled once for the module's tests (``probe.so``), and the host file it
    records to."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc is not installed: the probe is a shared object compiled here")
    folder = tmp_path_factory.mktemp("probe")
    outside = folder / "outside.log"
    (folder / "probe.c").write_text(_PROBE)
    subprocess.run(
        [gcc, "-shared", "-fPIC", f'-DOUTSIDE="{outside}"', "-o", str(folder / "probe.so"),
         str(folder / "probe.c")],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    # The probe works: preloaded into a host program, it records that program.
    subprocess.run(
        ["/bin/true"], env={"LD_PRELOAD": str(folder / "probe.so")}, cwd=folder, check=True
    )
    assert "/true uid" in outside.read_text()
    return folder / "probe.so", outside


@pytest.fixture
def probe(compiled_probe: tuple[Path, Path]) -> tuple[Path, Path]:
    """The compiled probe and the host file it records to, empty for this test."""
    so, outside = compiled_probe
    outside.unlink(missing_ok=True)
    return so, outside


def _outside(record: Path) -> list[str]:
    return record.read_text().splitlines() if record.exists() else []


# -- parse time: refused by name ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("LD_PRELOAD", "./x.so", "env 'LD_PRELOAD' is refused: the dynamic loader's"),
        ("LD_AUDIT", "./x.so", "env 'LD_AUDIT' is refused"),
        ("GCONV_PATH", ".", "env 'GCONV_PATH' is refused: the C library's"),
        ("GLIBC_TUNABLES", "x", "env 'GLIBC_TUNABLES' is refused"),
        ("BASH_ENV", "./x", "env 'BASH_ENV' is refused: the shell's"),
        ("BASH_FUNC_ls%%", "() { :; }", "is not a variable name"),
        ("PYTHONSTARTUP", "x.py", "env 'PYTHONSTARTUP' is refused: Python's"),
        ("PYTHONPATH", "src", "sys.path.insert"),
        ("LEVEL", "a\0b", "env 'LEVEL': a value cannot hold a NUL character"),
        ("LEVEL", "x" * 20_000, "bytes at most"),
        ("TACOCAT_ARENA_TOKEN", "t", "set by the arena"),
        ("A-B", "1", "not a variable name"),
    ],
)
def test_loader_and_interpreter_variables_are_refused_by_name_in_bot_toml_and_config(
    tmp_path: Path, name: str, value: str, says: str
) -> None:
    with pytest.raises(PackageError, match="^bot.toml: ") as refused:
        parse_manifest({"command": "python bot.py", "env": {name: value}}, tmp_path)
    assert says in str(refused.value)
    config = tmp_path / "t.toml"
    config.write_text(
        "[[bots]]\nname = 'mine'\ncommand = 'builtin:greedy'\n"
        f"env = {{ {json.dumps(name)} = {json.dumps(value)} }}\n"
        "[[bots]]\nname = 'other'\ncommand = 'builtin:random'\n"
    )
    with pytest.raises(ConfigError) as refused_config:
        load_config(config, {}, [])
    assert says in str(refused_config.value)


def test_ordinary_variables_pass() -> None:
    for name in ("LEVEL", "NODE_ENV", "OMP_NUM_THREADS", "PATH", "HOME", "LD", "LDFLAGS_X"):
        assert env_refusal(name, "3") is None, name


# -- defence in depth: the command line built for the launcher ----------------------------------
def _bot(tmp_path: Path, mode: SandboxMode, env: dict[str, str]) -> BotProcess:
    folder = tmp_path / "bot"
    folder.mkdir(exist_ok=True)
    (folder / "bot.py").write_text("import os\nprint('LEVEL', os.environ.get('LEVEL'))\n")
    socket = tmp_path / "s.sock"
    socket.touch()
    spec = BotSpec("mine", "python bot.py", dir=folder, env=tuple(env.items()))
    return BotProcess(
        spec,
        Launch(
            identity="mine@v1",
            token="secret-token",
            log_path=tmp_path / "mine.log",
            cwd=folder,
            mode=mode,
            limits=Limits(memory_mib=512),
            tcp_address="127.0.0.1:1",
            socket_path=socket if mode is SandboxMode.BWRAP else None,
        ),
    )


@pytest.mark.parametrize("mode", [SandboxMode.BWRAP, SandboxMode.NONE])
def test_a_slipped_variable_stands_nowhere_before_the_bots_own_exec(
    tmp_path: Path, mode: SandboxMode, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Built from a spec that bypassed the parser: sandboxed, no value of the bot's (nor its
    token) is on the command line at all, only in the handed-over descriptors; unsandboxed,
    only after ``env -i --``, the last exec before the bot's."""
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: "/usr/bin/bwrap")
    monkeypatch.setattr(sandbox, "code_paths", lambda: ())  # each asks a process otherwise
    monkeypatch.setattr(sandbox, "_bwrap_has", lambda bwrap, option: True)
    slipped = {"LD_PRELOAD": "/evil/probe.so", "LEVEL": "3"}
    process = _bot(tmp_path, mode, slipped)
    with sandbox.Handover() as handover:
        argv = process.command(None, handover)
        handed = [Path(f"/proc/self/fd/{fd}").read_bytes() for fd in handover.fds]
    if mode is SandboxMode.BWRAP:
        assert not any("/evil/probe.so" in a or "secret-token" in a for a in argv)
        assert argv[argv.index("--args") - 1].endswith("bwrap")
        assert any(b"export LD_PRELOAD=/evil/probe.so" in data for data in handed)
        assert any(b"export TACOCAT_ARENA_TOKEN=secret-token" in data for data in handed)
        # The environment is loaded by the last exec before the bot's, in the sandbox.
        # (after the check that the runner is alive: sandbox._RUNNER_ALIVE)
        assert argv[-5] == "-c" and argv[-3] == "sh"
        assert argv[-4].endswith(f'. {sandbox.ENV_IN_SANDBOX} && exec "$@"')
    else:
        start = argv.index("-i")
        assert argv[start - 1].endswith("/env") and argv[start + 1] == "--"
        assert all("/evil/probe.so" not in a for a in argv[:start])
        assert "LD_PRELOAD=/evil/probe.so" in argv[start:]


@pytest.mark.slow
def test_the_launcher_itself_runs_with_our_environment_only(tmp_path: Path) -> None:
    """``spawn``: what a launcher sees of the environment is ``LAUNCHER_ENV``, whatever ours."""

    async def main() -> str:
        process = await sandbox.spawn(["/usr/bin/env"], stdout=asyncio.subprocess.PIPE)
        out, _ = await process.communicate()
        sandbox.kill_group(process.pid)  # as every caller ends a spawn (the reaper stops)
        return out.decode()

    shown = dict(line.split("=", 1) for line in asyncio.run(main()).splitlines())
    assert shown == LAUNCHER_ENV


@pytest.mark.slow
@pytest.mark.parametrize("mode", [SandboxMode.BWRAP, SandboxMode.NONE])
def test_a_slipped_preload_runs_in_no_helper_of_ours(
    tmp_path: Path, probe: tuple[Path, Path], mode: SandboxMode
) -> None:
    """The probe as LD_PRELOAD of a bot and of a build, slipped past the parser: it reaches
    the bot's and the build's own process (the log says so), and nothing of ours on the
    host (sandboxed: nothing at all outside; unsandboxed: the bot alone, never sh, setpriv,
    prlimit, bwrap or env)."""
    if mode is SandboxMode.BWRAP and sandbox.bwrap_path() is None:
        pytest.skip("bubblewrap (bwrap) cannot sandbox here")
    so, outside = probe
    process = _bot(tmp_path, mode, {"LD_PRELOAD": str(tmp_path / "bot" / "probe.so")})
    (tmp_path / "bot").mkdir(exist_ok=True)
    shutil.copy(so, tmp_path / "bot" / "probe.so")
    package = BotPackage(
        (tmp_path / "bot").resolve(),
        "python bot.py",
        build="/usr/bin/touch built.txt",
        env=(("LD_PRELOAD", str(tmp_path / "bot" / "probe.so")),),
    )

    async def main() -> tuple[str, str]:
        await process.start()
        ended = await process.ended(60.0)
        built = await build_package(package, mode)
        assert built.ok, built
        return ended, built.log

    ended, build_log = asyncio.run(main())
    assert ended == "exited with code 0", process.tail()
    log = process.log_path.read_text()
    assert "LEVEL None" in log and "preloaded: " in log  # it did reach the bot
    assert "preloaded: " in build_log and (tmp_path / "bot" / "built.txt").exists()
    helpers = ("/sh", "/dash", "/setpriv", "/prlimit", "/bwrap", "/env")
    recorded = _outside(outside)
    if mode is SandboxMode.BWRAP:
        assert recorded == []
        assert "host sandbox" in log
    else:
        assert recorded, "unsandboxed, the bot itself runs on the host"
        assert not [line for line in recorded if line.split()[1].endswith(helpers)], recorded


# -- every path, over real uploads and the real CLI ---------------------------------------------
def _probe_package(folder: Path, so: Path, base: Path) -> Path:
    """A copy of ``base`` whose build and bot both preload the probe, set in their commands
    (which run in the sandbox): allowed, and harmless."""
    shutil.copytree(base, folder)
    shutil.copy(so, folder / "probe.so")
    command = (folder / "bot.toml").read_text().split('command = "', 1)[1].split('"', 1)[0]
    python, rest = command.split(" ", 1)
    assert python == "python"
    (folder / "bot.toml").write_text(
        f'command = "env LD_PRELOAD=./probe.so {sys.executable} {rest}"\n'
        'build = "env LD_PRELOAD=./probe.so /usr/bin/touch built.txt"\n'
    )
    return folder


def _submit(package: Path, arena: ArenaProcess, token: str, cwd: Path) -> str:
    """``submit --wait`` (in this process: the upload is the claim's, not the client's start)."""
    done = submit_in_process(package, arena, token, cwd)
    return done.stdout + done.stderr


@pytest.mark.slow
def test_gate_build_and_hosted_games_run_nothing_outside(
    tmp_path: Path, probe: tuple[Path, Path]
) -> None:
    if sandbox.bwrap_path() is None:
        pytest.skip("bubblewrap (bwrap) cannot sandbox here")
    so, outside = probe
    folder = tmp_path / "arena"
    tokens = add_players(folder, "mal", "bob")
    arena = start_arena(folder, "--move-timeout", "5", "--workers", "1")
    try:
        hijack = tmp_path / "hijack"
        hijack.mkdir()
        shutil.copy(so, hijack / "probe.so")
        (hijack / "bot.toml").write_text(
            'command = "python -m example_bots.greedy_bot"\n[env]\nLD_PRELOAD = "./probe.so"\n'
        )
        said = _submit(hijack, arena, tokens["mal"], tmp_path)
        assert "LD_PRELOAD" in said and "refused" in said, said
        preloading = _probe_package(tmp_path / "preloading", so, GREEDY)
        said = _submit(preloading, arena, tokens["mal"], tmp_path)
        active = re.search(r"mal v(\d+): active", said)
        assert active, said
        mine = f"mal@v{active[1]}"
        said = _submit(RANDOM, arena, tokens["bob"], tmp_path)
        assert "bob v1: active" in said, said

        def played() -> bool:
            rows = {f"{v['player']}@v{v['version']}": v for v in arena.json("/api/submissions")}
            return rows.get(mine, {}).get("games", 0) >= 2

        wait_until(played, 120, f"hosted games of {mine}")
    finally:
        arena.stop()
    assert _outside(outside) == []
    # It did run, in the sandbox: the build wrote its package folder (root organizer too),
    # and the gate's check and the games' processes loaded it.
    built = list(folder.rglob("built.txt"))
    assert built and "preloaded: " in (built[0].parent / "inside.log").read_text()
    logs = {p.name: p.read_text(errors="replace") for p in folder.rglob(f"logs/{mine}*")}
    assert any(name.endswith(".check.log") and "preloaded: " in t for name, t in logs.items())
    games = [t for name, t in logs.items() if not name.endswith(".check.log")]
    assert any("preloaded: " in t and "host sandbox" in t for t in games), sorted(logs)


@pytest.mark.slow
def test_run_refuses_a_preload_in_its_config_and_runs_one_in_a_command_inside(
    tmp_path: Path, probe: tuple[Path, Path]
) -> None:
    if sandbox.bwrap_path() is None:
        pytest.skip("bubblewrap (bwrap) cannot sandbox here")
    so, outside = probe
    bot = _probe_package(tmp_path / "mine", so, GREEDY)
    command = (bot / "bot.toml").read_text().split('command = "', 1)[1].split('"', 1)[0]

    def run(entry: str, name: str) -> subprocess.CompletedProcess[str]:
        config = tmp_path / f"{name}.toml"
        config.write_text(
            textwrap.dedent(f"""\
            games = 2
            sandbox = "bwrap"
            move_timeout = 5
            [[bots]]
            name = "mine"
            dir = "{bot}"
            {entry}
            [[bots]]
            name = "greedy"
            command = "builtin:greedy"
            """)
        )
        return subprocess.run(
            [sys.executable, "-m", "tacocat_arena.cli", "run", str(config), "--out",
             str(tmp_path / f"out-{name}")],
            cwd=tmp_path, capture_output=True, text=True, timeout=300,
        )  # fmt: skip

    refused = run('command = "python -m example_bots.greedy_bot"\n'
                  'env = { LD_PRELOAD = "./probe.so" }', "refused")  # fmt: skip
    assert refused.returncode != 0
    assert "env 'LD_PRELOAD' is refused" in refused.stdout + refused.stderr
    inside = run(f"command = {json.dumps(command)}", "inside")
    assert inside.returncode == 0, inside.stdout + inside.stderr
    logs = "".join(p.read_text() for p in (tmp_path / "out-inside" / "logs").glob("mine*.log"))
    assert "preloaded: " in logs and "host sandbox" in logs
    assert _outside(outside) == []


@pytest.mark.slow
def test_grade_batch_refuses_a_students_preload_and_runs_nothing_outside(
    tmp_path: Path, probe: tuple[Path, Path]
) -> None:
    if sandbox.bwrap_path() is None:
        pytest.skip("bubblewrap (bwrap) cannot sandbox here")
    so, outside = probe
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    mallory = submissions / "mallory"
    shutil.copytree(GREEDY, mallory)
    shutil.copy(so, mallory / "probe.so")
    (mallory / "bot.toml").write_text(
        'command = "python -m example_bots.greedy_bot"\n[env]\nLD_PRELOAD = "./probe.so"\n'
    )
    _probe_package(submissions / "pat", so, RANDOM)
    (tmp_path / "secret.txt").write_text("0123456789abcdef0123456789abcdef\n")
    out = tmp_path / "batch"
    done = subprocess.run(
        [sys.executable, "-m", "tacocat_arena.cli", "grade", "--batch", str(submissions),
         "--rubric", str(few_games_rubric(tmp_path)),
         "--out", str(out), "--workers", "2", "--secret-file", str(tmp_path / "secret.txt")],
        cwd=tmp_path, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    grades = {s: json.loads((out / s / "grade.json").read_text()) for s in ("mallory", "pat")}
    assert "LD_PRELOAD" in json.dumps(grades["mallory"])
    assert grades["pat"]["items"][0]["passed"], grades["pat"]["items"][0]
    assert _outside(outside) == []
    assert "preloaded: " in "".join(p.read_text() for p in (out / "pat").rglob("*.log"))
