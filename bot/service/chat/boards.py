"""From a position to the pictures the chat sees (the renderers know nothing of the rules).

Every picture made here remembers what it shows (a ``BoardSpec`` or ``CaptureSpec``, see
``bot.service.events``): the outbox stores that spec instead of the bytes and draws it again when
the message is delivered (``RENDERER``), which gives the same bytes (the drawing is deterministic,
and the spec holds the position as it stood, not the game's current one)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from threading import Event, Lock

from bot.rules import Move, Position, Variant
from bot.service.events import BoardSpec, CaptureSpec, Rendered, RenderedText, Spec
from renderers import BoardView, render_capture_gif, render_png
from renderers.text import render_text

BOARD_PX = 600
# Pictures drawn lately, by spec (what they show): a message delivered by the process that wrote
# it (the usual case) is not drawn twice, and one board sent to many chats (the daily post) is
# drawn once.  At most ~5 MB of boards of ~20 KB.
CACHE_SIZE = 256


def _rc(v: Variant, squares: Iterable[int]) -> list[tuple[int, int]]:
    return [v.square_to_rc(sq) for sq in squares]


@dataclass(frozen=True)
class SpecView(BoardView):
    """A board view that also says what it was made from (for the outbox's render spec)."""

    spec: BoardSpec | None = None


def board_view(
    pos: Position,
    last_path: Iterable[int] = (),
    captured: Iterable[int] = (),
    dots: Iterable[int] = (),
    selected: int | None = None,
    flipped: bool | None = None,
    routes: Iterable[Iterable[int]] = (),
    earlier_paths: Iterable[Iterable[int]] = (),
) -> SpecView:
    """The neutral picture description of a position; seen from the side to move by default.

    ``routes`` are numbered alternatives of one piece (capture paths ending on one square)."""
    spec = BoardSpec(
        variant=pos.variant.id, fen=pos.fen(), last_path=tuple(last_path), captured=tuple(captured),
        dots=tuple(dots), selected=selected or None, flipped=(not pos.white) if flipped is None else bool(flipped),
        routes=tuple(tuple(route) for route in routes), earlier_paths=tuple(tuple(path) for path in earlier_paths))
    return _view(pos, spec)


def _view(pos: Position, spec: BoardSpec) -> SpecView:
    v = pos.variant
    return SpecView(
        size=v.size,
        pieces={v.square_to_rc(sq): code for sq, code in pos.pieces().items()},
        labels={v.square_to_rc(sq): sq for sq in range(1, v.squares + 1)},
        last_path=_rc(v, spec.last_path),
        captured=_rc(v, spec.captured),
        dots=_rc(v, spec.dots),
        selected=v.square_to_rc(spec.selected) if spec.selected else None,
        flipped=spec.flipped,
        routes=[_rc(v, route) for route in spec.routes],
        earlier_paths=[_rc(v, path) for path in spec.earlier_paths],
        spec=spec,
    )


class _Cache:
    """The last CACHE_SIZE pictures drawn, by spec and form (thread-safe).  A picture being drawn
    by one thread is waited for by another that asks for it (a prefetch and the delivery that
    needs it draw it once)."""

    def __init__(self) -> None:
        self._items: OrderedDict[tuple[str, Spec], bytes | str] = OrderedDict()
        self._drawing: dict[tuple[str, Spec], Event] = {}
        self._lock = Lock()
        self.hits = 0
        self.draws = 0

    def get(self, key: tuple[str, Spec], draw: Callable[[], bytes | str]) -> bytes | str:
        while True:
            with self._lock:
                if key in self._items:
                    self._items.move_to_end(key)
                    self.hits += 1
                    return self._items[key]
                busy = self._drawing.get(key)
                if busy is None:
                    done = self._drawing[key] = Event()
                    self.draws += 1
                    break
            # Drawn by another thread right now: its picture, once there (or a try of our own,
            # should that drawing have failed).
            busy.wait()
        try:
            made = draw()
            self.put(key, made)
            return made
        finally:
            with self._lock:
                del self._drawing[key]
            done.set()

    def put(self, key: tuple[str, Spec], made: bytes | str) -> None:
        with self._lock:
            self._items[key] = made
            self._items.move_to_end(key)
            while len(self._items) > CACHE_SIZE:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.hits = self.draws = 0


_cache = _Cache()


def png(view: BoardView) -> bytes:
    """The board as a PNG; one made from a ``board_view`` carries its spec (``Rendered``) and is
    drawn once for as long as the cache keeps it: the spec is everything the picture shows (the
    position, the marks, the side seen from; the size and the theme are this module's), and the
    drawing is deterministic, so the same spec is the same bytes (the daily post of a thousand
    chats, a game's start, a loss on time showing the last move's board)."""
    spec = view.spec if isinstance(view, SpecView) else None
    if spec is None:
        return render_png(view, BOARD_PX)
    data = _cache.get(("picture", spec), lambda: render_png(view, BOARD_PX))
    assert isinstance(data, bytes)
    return Rendered(data, spec)


def text(view: BoardView) -> str:
    """The board drawn in text (the console); one made from a ``board_view`` carries its spec."""
    made = render_text(view)
    spec = view.spec if isinstance(view, SpecView) else None
    return RenderedText(made, spec) if spec is not None else made


def capture_animation(before: Position, move: Move, flipped: bool) -> bytes | None:
    """A GIF of a multi-capture step by step (captured pieces stay until the move ends); it
    carries its spec (``Rendered``)."""
    if len(move.captured) < 2:
        return None
    spec = CaptureSpec(variant=before.variant.id, fen=before.fen(), path=tuple(move.path),
                       captured=tuple(move.captured), promotes=bool(move.promotes), flipped=bool(flipped))
    data = _cache.get(("picture", spec), lambda: _capture_gif(before, move, flipped))
    assert isinstance(data, bytes)
    return Rendered(data, spec)


def _capture_gif(before: Position, move: Move, flipped: bool) -> bytes:
    v = before.variant
    pieces = {v.square_to_rc(sq): code for sq, code in before.pieces().items()}
    mover = pieces.pop(v.square_to_rc(move.start))
    labels = {v.square_to_rc(sq): sq for sq in range(1, v.squares + 1)}
    frames = []
    for i, sq in enumerate(move.path):
        now = dict(pieces)
        now[v.square_to_rc(sq)] = mover
        frames.append(BoardView(size=v.size, pieces=now, labels=labels, last_path=_rc(v, move.path[: i + 1]),
                                flipped=flipped))
    final = {rc: code for rc, code in pieces.items() if rc not in set(_rc(v, move.captured))}
    final[v.square_to_rc(move.end)] = mover.upper() if move.promotes else mover
    frames.append(BoardView(size=v.size, pieces=final, labels=labels, last_path=_rc(v, move.path),
                            captured=_rc(v, move.captured), flipped=flipped))
    return render_capture_gif(frames, BOARD_PX)


class _SpecRenderer:
    """Draws the specs stored in the outbox (``Reply.from_json(..., RENDERER)``)."""

    def picture(self, spec: Spec) -> bytes:
        # png and capture_animation keep what they draw by spec: a hit costs no drawing.
        return self._draw(spec)

    @staticmethod
    def _draw(spec: Spec) -> bytes:
        if isinstance(spec, BoardSpec):
            return png(_view(Position.from_fen(spec.variant, spec.fen), spec))
        move = Move(spec.path, spec.captured, spec.promotes)
        made = capture_animation(Position.from_fen(spec.variant, spec.fen), move, spec.flipped)
        if made is None:
            raise ValueError("a capture animation needs at least two captures")
        return made

    @staticmethod
    def remember(picture: bytes | None) -> None:
        """A picture just written to the outbox as its spec: drawn already, kept for its delivery."""
        if isinstance(picture, Rendered):
            _cache.put(("picture", picture.spec), bytes(picture))

    def text(self, spec: Spec) -> str:
        if not isinstance(spec, BoardSpec):
            raise ValueError("only a board is drawn in text")
        return text(_view(Position.from_fen(spec.variant, spec.fen), spec))


RENDERER = _SpecRenderer()


def forget_drawings() -> None:
    """Empty the cache of pictures (tests: a spec drawn afresh, as by another process)."""
    _cache.clear()


def drawing_counts() -> tuple[int, int]:
    """Pictures drawn and pictures found already drawn (by spec) since the cache was last
    emptied: (draws, hits); for benches and tests."""
    return _cache.draws, _cache.hits
