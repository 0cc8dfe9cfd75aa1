"""The service's use cases, one plain class per module (games, play, opponent, challenges, clocks,
puzzles, ratings, analysis, settings, history): each gets its collaborators in its constructor
(``base.Runtime``, an outlet for its messages, the other use cases it needs), and they follow each
other's effects through the domain events of ``bot.service.domain``.  ``bot.service.compose``
builds them; ``GameService`` is the facade the platforms call."""
