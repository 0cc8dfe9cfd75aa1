"""What a reply should say, taken from the catalogs: tests compare replies with a message's key and
values, not with its English words, so rewording a catalog changes no test (issue 31).

``tr`` is the message itself; ``pattern`` the message with the values a test does not fix as
wildcards (a clock's time left, a generated number), whose named groups give them back; ``regex``
its source, to build a bigger pattern (a console line).
"""

from __future__ import annotations

import re

from bot.i18n import CONTRACTIONS, catalog, t

PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


def tr(lang: str, key: str, /, **values: object) -> str:
    """The catalog text of ``key`` in ``lang`` filled in with ``values``."""
    return t(lang, key, **values)


def _forms(lang: str, key: str) -> list[str]:
    """The templates of a message: its plural forms (``key.one``, ``key.other``, what tn() says)
    when it has them, else itself (English when the language lacks it, as t() does)."""
    messages, english = catalog(lang), catalog("en")
    forms = [messages.get(name) or english.get(name) for name in (f"{key}.one", f"{key}.other")]
    found = [form for form in forms if form]
    if found:
        return found
    if key not in messages and key not in english:
        raise KeyError(key)
    return [messages.get(key) or english[key]]


def _regex(lang: str, template: str, values: dict[str, object]) -> str:
    # The values a test gives are filled in (with the language's contractions, as t() applies
    # them); each other placeholder matches any text, a repeated one the same text again.
    filled = PLACEHOLDER.sub(lambda m: str(values[m[1]]) if m[1] in values else m[0], template)
    for old, new in CONTRACTIONS.get(lang, ()):
        filled = filled.replace(old, new)
    out, seen, at = [], set(), 0
    for m in PLACEHOLDER.finditer(filled):
        out.append(re.escape(filled[at:m.start()]))
        name = m[1]
        out.append(f"(?P={name})" if name in seen else f"(?P<{name}>[^\\n]+?)")
        seen.add(name)
        at = m.end()
    out.append(re.escape(filled[at:]))
    return "".join(out)


class Phrase:
    """A message as a pattern: ``search(text)`` finds it in a reply (its groups are the values it was
    said with); several templates (plural forms, alternatives) are tried in turn."""

    def __init__(self, regexes: list[str]) -> None:
        self.patterns = [re.compile(regex) for regex in regexes]

    def search(self, text: str) -> re.Match[str] | None:
        """The message anywhere in ``text``."""
        return self._first("search", text)

    def match(self, text: str) -> re.Match[str] | None:
        """The message at the very start of ``text``."""
        return self._first("match", text)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        """``text`` is the message and nothing more."""
        return self._first("fullmatch", text)

    def _first(self, how: str, text: str) -> re.Match[str] | None:
        for compiled in self.patterns:
            found: re.Match[str] | None = getattr(compiled, how)(text)
            if found is not None:
                return found
        return None

    def __repr__(self) -> str:
        return f"Phrase({[p.pattern for p in self.patterns]!r})"


def pattern(lang: str, key: str, /, *alternatives: str, **values: object) -> Phrase:
    """The message ``key`` (or any of ``alternatives``, or any plural form) with ``values`` filled in
    and every other placeholder as a wildcard (within one line)."""
    return Phrase([_regex(lang, template, values) for k in (key, *alternatives) for template in _forms(lang, k)])


def regex(lang: str, key: str, /, **pieces: str) -> str:
    """The source of a regular expression for the message ``key``, to build a bigger one (a console
    line): its text escaped, each placeholder named in ``pieces`` replaced by that regex, the others
    by any text on one line (no contractions: for English and for placeholders that take none)."""
    sources = []
    for template in _forms(lang, key):
        parts = PLACEHOLDER.split(template)   # text, name, text, name, ..., text
        sources.append("".join(re.escape(part) if i % 2 == 0 else pieces.get(part, r"[^\n]+?")
                               for i, part in enumerate(parts)))
    return sources[0] if len(sources) == 1 else "(?:" + "|".join(sources) + ")"


def says(text: str, lang: str, key: str, /, **values: object) -> bool:
    """Whether ``text`` holds the message ``key`` with ``values`` (other placeholders: anything)."""
    return pattern(lang, key, **values).search(text) is not None


def to_move(lang: str, name: str, color: str) -> Phrase:
    """The caption naming ``name`` (``color``: white or black) as the player to move, however much
    time is left."""
    words = tr(lang, f"color.{color}")
    return pattern(lang, "game.to_move", "game.to_move_last_minute", name=name, color=words,
                   to_name=tr(lang, "name.to_vowel" if name[:1].lower() in ("a", "á", "à") else "name.to", name=name))
