"""The composition root: every use case of the service, built once from one configuration.

``compose`` is the one place that knows which use case needs which: each gets its collaborators
in its constructor, and cross-feature effects are wired here as subscriptions on one event bus
(see ``bot.service.domain``).  ``bot.app.build_service`` and ``GameService`` both come through it.

It builds the use cases and what they write to (their ``ServiceOutlet``: the outbox and whom to
wake), never the facade or the chat layer above them: those take the ``UseCases`` it returns.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from bot.service.domain import EventBus
from bot.service.events import SpecRenderer
from bot.service.features.analysis import Analysis
from bot.service.features.base import Runtime
from bot.service.features.challenges import Challenges
from bot.service.features.clocks import Clocks
from bot.service.features.games import Games
from bot.service.features.history import History
from bot.service.features.opponent import Opponent
from bot.service.features.own_puzzles import OwnPuzzles
from bot.service.features.play import Play
from bot.service.features.puzzle_runs import PuzzleRuns
from bot.service.features.puzzles import PuzzleRecords, Puzzles
from bot.service.features.ratings import Ratings
from bot.service.features.settings import Settings
from bot.service.features.storm import Storm
from bot.service.features.tournaments import Tournaments
from bot.service.outbox import Outbox, ServiceOutlet
from bot.service.thinking import Thinker
from bot.storage import Store
from bot.storage.opening import open_store

MAX_BOT_SECONDS = 600.0
MAX_BUSY_TIMEOUT = 3600.0


class ConfigError(ValueError):
    """A configuration the service cannot run with; the message says which field and why."""


@dataclass(frozen=True)
class ServiceConfig:
    """Everything the service is built from.  Give the database as a path or ``sqlite:///`` URL
    (``database``) or as an open store (``storage``: tests, benchmarks), never both.

    ``bot_seconds`` caps the bot's time per move (None: each level's own); ``monotonic`` goes with
    a test's own ``clock`` (see Clocks); ``busy_timeout`` is how long a write waits for another
    process's lock (None: the store's default)."""

    database: str | None = None
    storage: Store | None = None
    clock: Callable[[], float] = time.time
    monotonic: Callable[[], float] | None = None
    rng: random.Random | None = None
    seed: int | None = None
    thinker: Thinker | None = None
    bot_seconds: float | None = None
    busy_timeout: float | None = None

    def validated(self) -> ServiceConfig:
        """This configuration, or ConfigError naming the first field that is wrong."""
        if (self.database is None) == (self.storage is None):
            raise ConfigError("give either database (a path or sqlite:/// URL) or storage (an open store), not "
                              + ("both" if self.database is not None else "neither"))
        if self.database is not None and (not isinstance(self.database, str) or not self.database.strip()):
            raise ConfigError(f"database must be a non-empty path or URL, not {self.database!r}")
        if not callable(self.clock):
            raise ConfigError(f"clock must be a function returning epoch seconds, not {self.clock!r}")
        if self.monotonic is not None and not callable(self.monotonic):
            raise ConfigError(f"monotonic must be a function returning seconds, not {self.monotonic!r}")
        if self.rng is not None and self.seed is not None:
            raise ConfigError("give rng or seed, not both")
        if self.bot_seconds is not None and not (isinstance(self.bot_seconds, int | float)
                                                 and not isinstance(self.bot_seconds, bool)
                                                 and math.isfinite(self.bot_seconds)
                                                 and 0 < self.bot_seconds <= MAX_BOT_SECONDS):
            raise ConfigError(f"bot_seconds must be a number of seconds in (0, {MAX_BOT_SECONDS:g}], "
                              f"not {self.bot_seconds!r}")
        if self.busy_timeout is not None and not (isinstance(self.busy_timeout, int | float)
                                                  and 0 <= self.busy_timeout <= MAX_BUSY_TIMEOUT):
            raise ConfigError(f"busy_timeout must be seconds in [0, {MAX_BUSY_TIMEOUT:g}], not {self.busy_timeout!r}")
        return self


@dataclass(frozen=True)
class UseCases:
    """Every use case of one service, the bus that connects them and the outlet they write to."""

    runtime: Runtime
    bus: EventBus
    outlet: ServiceOutlet
    games: Games
    records: PuzzleRecords
    ratings: Ratings
    puzzles: Puzzles
    opponent: Opponent
    challenges: Challenges
    play: Play
    analysis: Analysis
    settings: Settings
    history: History
    clocks: Clocks
    tournaments: Tournaments
    own_puzzles: OwnPuzzles
    puzzle_runs: PuzzleRuns
    storm: Storm


def open_config_store(config: ServiceConfig) -> Store:
    """The store a configuration names (its own, or the database opened)."""
    if config.storage is not None:
        return config.storage
    assert config.database is not None
    return open_store(config.database, config.busy_timeout)


def compose(config: ServiceConfig, outbox: Outbox | None = None, renderer: SpecRenderer | None = None) -> UseCases:
    """Build every use case from a configuration (validated here).  What they send on their own
    goes to ``outbox`` (None: one on the configuration's store, reading the clock the runtime has
    then, since a test or the console may set another, drawing its pictures with ``renderer``).
    The renderer is handed in (the facade gives the chat layer's) rather than imported: the chat
    layer imports this module, so importing it back would tie the two into one knot."""
    config = config.validated()
    rng = config.rng if config.rng is not None else random.Random(config.seed)
    runtime = Runtime(open_config_store(config), config.clock, rng, config.thinker or Thinker(),
                      config.bot_seconds, config.monotonic)
    outlet = ServiceOutlet(outbox or Outbox(runtime.storage, lambda: runtime.clock(), renderer=renderer))
    bus = EventBus()
    games = Games(runtime, outlet, bus)
    records = PuzzleRecords(runtime, outlet)
    ratings = Ratings(runtime, outlet, games, records, bus)
    puzzles = Puzzles(runtime, outlet, games, records, ratings, bus)
    opponent = Opponent(runtime, outlet, games)
    challenges = Challenges(runtime, outlet, games)
    play = Play(runtime, outlet, games, opponent, puzzles)
    # The analysis report comes later through the outbox: the notice presenter words and draws it.
    analysis = Analysis(runtime, outlet, games)
    settings = Settings(runtime, outlet, games)
    history = History(runtime, outlet, games, challenges, opponent)
    # A tournament game's result is recorded in the game's transaction (it follows GameFinished).
    tournaments = Tournaments(runtime, outlet, games, bus)
    clocks = Clocks(runtime, outlet, games, opponent, challenges, puzzles, tournaments)
    # Finished games are queued for their players' puzzles (it follows GameFinished) and scanned as
    # timed work; an answer to one of them is its review (it follows AttemptScored).
    own_puzzles = OwnPuzzles(runtime, outlet, bus)
    clocks.own_puzzles = own_puzzles
    # Storm runs played on the web board; their ends are timed work (scores: the chat's records).
    storm = Storm(runtime, outlet)
    clocks.storm = storm
    # Streak runs are personal puzzles: Puzzles asks the run of a post what follows an answer.
    puzzle_runs = PuzzleRuns(runtime, outlet, games)
    puzzles.runs = puzzle_runs
    storm.scores = puzzle_runs
    return UseCases(runtime, bus, outlet, games, records, ratings, puzzles, opponent, challenges, play, analysis,
                    settings, history, clocks, tournaments,
                    own_puzzles=own_puzzles, storm=storm, puzzle_runs=puzzle_runs)
