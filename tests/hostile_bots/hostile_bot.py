"""A bot that cheats, as a hostile author would, then plays (the SDK's defaults, first legal
attack).  Run by ``tacocat-arena run`` as its own process; every finding is one line on
stdout (its log), ``PROBE <what> <result>``, for the test to read.

Modes (``--mode``, repeatable):

  spy        look for other processes (/proc), read their environment for tokens and their
             command lines for seeds, read the config, the store and the output folder in
             the bot's folder, the organizer's home, write to its own folder, open TCP to
             127.0.0.1:--probe-port and to a public address; with a token found, connect as
             its owner over the referee's address (raw gRPC, from arena.proto)
  predict    compute each game's deal from the seed --seed with the documented derivation
             and compare with the hand it is dealt (HAND lines let the test re-derive)
  remember   remember every game played by this process; say when a game is the twin of
             one it played (its opponent then holds the hand it held)
  orphan     leave a child running (its own session, double-forked), tagged --tag
  forkbomb   in its --after-th decision fork until refused, then fail
  hog        in its --after-th decision take memory until refused, then fail: --method
             heap (default), tmpfs (files in /tmp), shared (shared anonymous mappings) or
             memfd, 16 MiB at a time, --hog-mib in all
  kill9      in its --after-th decision SIGKILL itself
  exit       in its --after-th decision exit with code 7
  chatter    print --chatter-kib KiB of output at start (for the log cap)
  flocktwin  twins talking through flock() on read-only files both see (--locks, one
             file per deal and card copy, ``dD-V-K``): instance A locks the hand it was
             dealt in each game and holds it; instance B tries its deal's locks at its first
             decisions and prints what it finds held (``TWINSAW game seat cards``, or
             ``none``); both say whether ``canary`` is locked (the test holds it)
  peek       list the folder of the file $PEEK names and read the file (the path comes in
             the environment: on the command line the pre-flight check would refuse it),
             and read its own script, which it must see (the probe's control)
  portthief  (no sandbox) read --victim's token, bind ::ffff:127.0.0.2 at the port of its
             connection to the referee and connect as it; then kill it with SIGKILL (once a
             game with its restart has begun) and do the same as soon as its restart
             connects, --attempts times in all (the old
             check, by port alone, let it past: ALREADY_EXISTS, not PERMISSION_DENIED)
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import glob
import mmap
import os
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections import Counter
from pathlib import Path

from tacocat_bot import Bot, run


def probe(what: str, result: object) -> None:
    print(f"PROBE {what} {result}", flush=True)


def readable(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            data = handle.read(4096)
    except OSError as error:
        return f"denied:{error.__class__.__name__}"
    return f"read:{len(data)}"


def spy(options: argparse.Namespace) -> None:
    me = os.getpid()
    pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    others = []
    for pid in pids:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if cmdline.split(b"\0")[0].endswith(b"bwrap"):
            continue  # the sandbox's own init (pid 1 in it): bwrap, holding nothing
        if pid != me and (b"tacocat" in cmdline or b"example_bots" in cmdline):
            others.append(pid)
    probe("processes-visible", len(pids))
    probe("arena-processes-visible", len(others))
    tokens = _tokens_seen()
    probe("tokens-found", ",".join(sorted(tokens)) or "none")
    seeds = 0
    for path in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            seeds += b"--seed" in Path(path).read_bytes()
        except OSError:
            pass
    probe("cmdlines-with-seed", seeds)
    probe("config", readable("tournament.toml"))
    probe("store", readable("out/tournament.sqlite"))
    probe("output-folder", "listed" if _listable("out") else "hidden")
    try:
        home = ",".join(sorted(os.listdir(os.path.expanduser("~root")))) or "empty"
    except OSError:
        home = "absent"
    probe("home-entries", home)
    probe("organizer-secret", os.environ.get("ORGANIZER_SECRET", "absent"))
    probe("shadow", readable("/etc/shadow"))
    probe("config-env", os.environ.get("LEVEL", "absent"))
    try:
        Path("written-by-bot.txt").write_text("x")
        probe("write-own-folder", "written")
    except OSError as error:
        probe("write-own-folder", f"denied:{error.__class__.__name__}")
    for host, port in (("127.0.0.1", options.probe_port), ("1.1.1.1", 53)):
        try:
            with socket.create_connection((host, port), timeout=2):
                probe(f"tcp-{host}", "connected")
        except OSError as error:
            probe(f"tcp-{host}", f"refused:{error.__class__.__name__}")
    for victim in sorted(tokens):
        probe(f"theft-{victim}", _steal_live(victim, *tokens[victim]))


def _tokens_seen() -> dict[str, tuple[int, str]]:
    """Every other bot's token of this referee in a process environment this process can
    read: name -> (the process's pid, its token).  Bots of other referees on the machine
    (other tests' runs and arenas) are left out: their tokens mean nothing to this one, and
    trying each of them in turn, while their games came and went, once kept the thief from
    connecting within its 30 s (load 23, four test workers)."""
    tokens = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        env = dict(item.decode(errors="replace").partition("=")[::2] for item in environ)
        name = env.get("TACOCAT_ARENA_BOT")
        if env.get("TACOCAT_ARENA_ADDRESS") != os.environ["TACOCAT_ARENA_ADDRESS"]:
            continue
        if name and env.get("TACOCAT_ARENA_TOKEN") and name != os.environ["TACOCAT_ARENA_BOT"]:
            tokens[name] = (int(entry), env["TACOCAT_ARENA_TOKEN"])
    return tokens


def _steal_live(victim: str, pid: int, token: str) -> str:
    """``steal`` with a token whose process still runs: one that ended meanwhile (its games
    over, under load, while the other probes ran) took its token with it, and the referee's
    UNAUTHENTICATED then says nothing of a live token.  So: read again from a process of the
    victim's alive now, a bounded number of times; a refusal while the token's process lives
    is the answer."""
    result = steal(victim, token)
    for _ in range(50):
        if result != "UNAUTHENTICATED" or Path(f"/proc/{pid}").exists():
            return result
        found = _tokens_seen().get(victim)
        if found is None:
            time.sleep(0.1)  # between two of the victim's processes
            continue
        pid, token = found
        result = steal(victim, token)
    return result


def peek() -> None:
    target = Path(os.environ["PEEK"])
    try:
        probe("peek-list", f"listed:{','.join(sorted(os.listdir(target.parent)))}")
    except OSError as error:
        probe("peek-list", f"denied:{error.__class__.__name__}")
    probe("peek-read", readable(str(target)))
    probe("peek-own-script", readable(__file__))


#: Set at this bot's first decision: a game has begun, so its opponent's session is live.
PLAYING = threading.Event()
#: How many games this bot has begun (``on_game_start``), told to the thief's thread.
BEGUN = threading.Condition()
GAMES_BEGUN = [0]


def port_thief(options: argparse.Namespace) -> None:
    """The victim's seat from a socket at the victim's own port on another loopback address
    (the kernel lists it in ``tcp6``), while the victim is live and right after each of its
    restarts; in a thread, while this bot plays.  It starts once a game against the victim
    has begun: a victim killed before its first session is an error of the runner's (the
    bot never started), not the crash the test is after."""
    PLAYING.wait(60)
    referee_port = int(os.environ["TACOCAT_ARENA_ADDRESS"].rpartition(":")[2])
    for attempt in range(options.attempts):
        found = _victim_connection(options.victim, referee_port, deadline=time.monotonic() + 60)
        if found is None:
            probe("port-theft", "no-victim")
            return
        pid, token, port = found
        with BEGUN:
            begun = GAMES_BEGUN[0]
        result = steal(options.victim, token, source=("::ffff:127.0.0.2", port))
        probe("port-theft", f"{'live' if attempt == 0 else 'restarted'}:{result}")
        if attempt + 1 < options.attempts:
            if attempt > 0:
                # Killed before its session was made, a restart is the runner's error (the bot
                # never started), not a crash; a TCP connection is not yet a session (a loaded
                # run killed start #3 so).  A game begun after its restart connected is the
                # event that says its session is live.
                with BEGUN:
                    BEGUN.wait_for(lambda begun=begun: GAMES_BEGUN[0] > begun, 60)
            os.kill(pid, 9)
            while Path(f"/proc/{pid}").exists():  # gone once the runner reaps it
                time.sleep(0.005)


def _victim_connection(
    victim: str, referee_port: int, deadline: float
) -> tuple[int, str, int] | None:
    """The victim's pid, token and the local port of its connection to the referee."""
    while time.monotonic() < deadline:
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
                fds = os.listdir(f"/proc/{entry}/fd")
                links = {os.readlink(f"/proc/{entry}/fd/{fd}") for fd in fds}
            except OSError:
                continue
            env = dict(item.decode(errors="replace").partition("=")[::2] for item in environ)
            if env.get("TACOCAT_ARENA_BOT") != victim or "TACOCAT_ARENA_TOKEN" not in env:
                continue
            for table in ("tcp", "tcp6"):
                for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
                    fields = line.split()
                    if (
                        f"socket:[{fields[9]}]" in links
                        and int(fields[2].rpartition(":")[2], 16) == referee_port
                    ):
                        port = int(fields[1].rpartition(":")[2], 16)
                        return int(entry), env["TACOCAT_ARENA_TOKEN"], port
        time.sleep(0.002)
    return None


def _relay(source: tuple[str, int], target: tuple[str, int]) -> tuple[str, socket.socket]:
    """A local address whose one connection is relayed over a socket bound to ``source``
    (gRPC cannot choose its source address); returns it and the listener to close."""
    listener = socket.create_server(("127.0.0.1", 0))

    def pump(a: socket.socket, b: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := a.recv(65536):
                b.sendall(data)
        with contextlib.suppress(OSError):
            b.shutdown(socket.SHUT_WR)

    def serve() -> None:
        with contextlib.suppress(OSError):
            inner, _ = listener.accept()
            outer = socket.socket(socket.AF_INET6)
            outer.bind(source)
            outer.connect(target)
            threading.Thread(target=pump, args=(inner, outer), daemon=True).start()
            pump(outer, inner)

    threading.Thread(target=serve, daemon=True).start()
    return f"127.0.0.1:{listener.getsockname()[1]}", listener


def _listable(path: str) -> bool:
    try:
        return bool(os.listdir(path))
    except OSError:
        return False


def steal(victim: str, token: str, source: tuple[str, int] | None = None) -> str:
    """Open a session as ``victim`` with its token (from ``source``, an address and port, if
    given): the referee must refuse it."""
    import grpc

    from tacocat.v1 import arena_pb2 as pb
    from tacocat.v1 import arena_pb2_grpc
    from tacocat_arena.protocol.wire import PROTOCOL_VERSION

    hello = pb.BotMessage(
        hello=pb.Hello(protocol_version=PROTOCOL_VERSION, bot_name=victim, token=token)
    )
    address = os.environ["TACOCAT_ARENA_ADDRESS"]
    listener = None
    if source is not None:
        host, _, port = address.rpartition(":")
        address, listener = _relay(source, (f"::ffff:{host}", int(port)))
    try:
        with grpc.insecure_channel(address) as channel:
            stub = arena_pb2_grpc.ArenaStub(channel)
            try:
                for reply in stub.Play(iter([hello]), timeout=10):
                    if reply.WhichOneof("message") == "welcome":
                        return "ACCEPTED"
            except grpc.RpcError as error:
                return f"{error.code().name}"
        return "ended"
    finally:
        if listener is not None:
            listener.close()


class Hostile(Bot):
    """Plays one game at a time (so it knows which game a decision belongs to)."""

    def __init__(self, options: argparse.Namespace) -> None:
        self.options = options
        self.decisions = 0
        self.played: set[str] = set()
        self.current = ""
        self.seat = 0
        self.first_view_done: set[str] = set()
        self.held: list[object] = []
        self.seen: set[str] = set()
        self.looks: Counter[str] = Counter()

    def on_game_start(self, game_id: str, seat: int, opponent: str) -> None:
        self.current, self.seat = game_id, seat
        with BEGUN:
            GAMES_BEGUN[0] += 1
            BEGUN.notify_all()
        if "remember" in self.options.mode:
            names, deal = game_id.rsplit("-", 1)
            first, second = names.split("-")
            twin = f"{second}-{first}-{deal}"  # same deal, seats swapped
            probe("held-opponent-hand" if twin in self.played else "fresh-deal", game_id)
            self.played.add(game_id)

    def act(self, view):  # type: ignore[no-untyped-def]
        PLAYING.set()
        if "flocktwin" in self.options.mode:
            self.flock_twin(view)
        if "predict" in self.options.mode and self.current not in self.first_view_done:
            self.first_view_done.add(self.current)
            hand = sorted(view.hand)
            print(f"HAND {self.current} {self.seat} {','.join(map(str, hand))}", flush=True)
            guesses = predicted(self.options.seed, self.current, self.seat)
            probe("predicted" if hand in guesses else "mispredicted", self.current)
        self.decisions += 1
        if self.decisions == self.options.after:
            self.misbehave()
        return super().act(view)

    def flock_twin(self, view) -> None:  # type: ignore[no-untyped-def]
        locks = Path(self.options.locks)
        deal = self.current.rsplit("-", 1)[1]  # "d3": the deal both games of a pair share
        if not os.environ["TACOCAT_ARENA_BOT"].endswith("~B"):  # A: lock its hand
            if self.current in self.first_view_done:
                return
            self.first_view_done.add(self.current)
            counts = Counter(view.hand)
            for value, copies in counts.items():
                for copy in range(copies):
                    handle = open(locks / f"{deal}-{value}-{copy}")
                    fcntl.flock(handle, fcntl.LOCK_EX)
                    self.held.append(handle)  # held while A lives
            return
        if self.current in self.seen:
            return
        found = []
        for path in sorted(locks.glob(f"{deal}-*-*")):
            with open(path) as handle:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    found.append(int(path.name.split("-")[1]))
        self.looks[self.current] += 1
        if found or self.looks[self.current] >= 4:  # a few looks, then it says what it saw
            self.seen.add(self.current)
            cards = ",".join(map(str, sorted(found))) or "none"
            print(f"TWINSAW {self.current} {self.seat} {cards}", flush=True)

    def misbehave(self) -> None:
        """Its attempt; an error ends the process with its traceback (as an uncaught one would
        in a bot of its own: the SDK would otherwise play a default move and go on)."""
        try:
            self._misbehave()
        except BaseException:
            traceback.print_exc()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(1)

    def _misbehave(self) -> None:
        mode = self.options.mode
        if "forkbomb" in mode:
            # The bomb goes off in a plain child (forking this gRPC-threaded process would
            # hang in gRPC's fork handlers): it forks until refused, its children sleep.
            bomb = (
                "import os, time\n"
                "n = 0\n"
                "try:\n"
                "    while n < 300:\n"  # bounded: stops by itself where nothing limits it
                "        if os.fork() == 0:\n"
                "            time.sleep(30); os._exit(0)\n"
                "        n += 1\n"
                "except OSError as error:\n"
                "    print('PROBE fork-refused', n, error, flush=True)\n"
                "print('PROBE forked', n, flush=True)\n"
            )
            subprocess.run([sys.executable, "-c", bomb], check=False)
            for _ in range(100):  # and then threads of its own, until one is refused
                threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
        if "hog" in mode:
            hoard: list[object] = []
            take = _HOGS[self.options.method]
            try:
                while len(hoard) < self.options.hog_mib // 16:  # bounded where nothing limits
                    hoard.append(take(len(hoard)))
            finally:
                probe("allocated-mib", 16 * len(hoard))
        if "kill9" in mode:
            os.kill(os.getpid(), 9)
        if "exit" in mode:
            sys.stdout.flush()
            os._exit(7)

    def attack(self, view):  # type: ignore[no-untyped-def]
        return view.legal.attacks[0]


_CHUNK = 16 * 2**20


def _shared(_: int) -> object:
    """16 MiB of shared anonymous memory, touched (RLIMIT_DATA does not count it)."""
    block = mmap.mmap(-1, _CHUNK, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
    block.write(b"\1" * _CHUNK)
    return block


def _memfd(_: int) -> object:
    """16 MiB in a memfd (an unnamed tmpfs file: no mount's size counts it)."""
    fd = os.memfd_create("hog")
    os.write(fd, b"\1" * _CHUNK)
    return fd


def _tmpfs(index: int) -> object:
    """16 MiB more in the private /tmp (a tmpfs: memory)."""
    path = Path(f"/tmp/hog-{index}")
    path.write_bytes(b"\1" * _CHUNK)
    return path


#: --method: how the hog takes its memory.
_HOGS = {
    "heap": lambda _: bytearray(b"\1" * _CHUNK),
    "shared": _shared,
    "memfd": _memfd,
    "tmpfs": _tmpfs,
}


def predicted(seed: int, game_id: str, seat: int) -> list[list[int]]:
    """The documented derivation without the tournament's secret: what the config gives
    (both orders of the pairing: the bot cannot tell which the plan used)."""
    from tacocat_arena.engine import DEFAULT_RULESET, Game
    from tacocat_arena.tournament.schedule import deal_seed

    names, deal = game_id.rsplit("-", 1)
    a, b = names.split("-")
    index = int(deal[1:])
    return [
        sorted(Game(DEFAULT_RULESET, deal_seed(seed, pairing, index, secret="")).hands[seat])
        for pairing in ((a, b), (b, a))
    ]


def orphan(tag: str) -> None:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv("/bin/sleep", ["/bin/sleep", "300", tag])
        os._exit(0)
    os.wait()
    probe("orphan-left", tag)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", action="append", default=[])
    parser.add_argument("--probe-port", type=int, default=9)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--after", type=int, default=0)
    parser.add_argument("--tag", default="hostile")
    parser.add_argument("--chatter-kib", type=int, default=0)
    parser.add_argument("--victim", default="victim")
    parser.add_argument("--locks", default="locks")
    parser.add_argument("--method", choices=sorted(_HOGS), default="heap")
    parser.add_argument("--hog-mib", type=int, default=4096)
    parser.add_argument("--attempts", type=int, default=4)
    options = parser.parse_args()
    if "chatter" in options.mode:
        line = "chatter " + "x" * 90 + "\n"
        for _ in range(options.chatter_kib * 1024 // len(line)):
            sys.stdout.write(line)
        print("LAST CHATTER LINE", flush=True)
    if "spy" in options.mode:
        spy(options)
    if "peek" in options.mode:
        peek()
    if "orphan" in options.mode:
        orphan(options.tag)
    if "flocktwin" in options.mode:
        with open(Path(options.locks) / "canary") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                probe("canary", "free")
            except BlockingIOError:
                probe("canary", "locked")
    if "portthief" in options.mode:
        threading.Thread(target=port_thief, args=(options,), daemon=True).start()
    run(Hostile(options), max_concurrent_games=1)


if __name__ == "__main__":
    main()
