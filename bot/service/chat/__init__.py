"""The chat layer's package: everything that knows a chat (commands and their words, buttons'
codes, deep links, what a message means, presenters, boards and wording) and translates it into the
use cases' calls.  The commands, buttons and the routing to them are in ``layer.py``.

This ``__init__`` stays empty on purpose: it runs before any module of the package is loaded, so
whatever it imported would be loaded by everyone who reads only a presenter or the wording (the
composition, the web board), and importing them back would tie them into one knot (issue 31)."""
