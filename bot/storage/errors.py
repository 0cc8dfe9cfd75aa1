"""What storage raises: one class per way a database cannot do what was asked."""

from __future__ import annotations


class StorageError(Exception):
    """The database cannot be used; the message is one line for whoever runs the bot."""


class StorageBusy(StorageError):
    """Another connection held the write lock for longer than the busy timeout."""


class StorageUnavailable(StorageBusy):
    """The database server cannot be reached (stopped, restarting, the network down): nothing was
    written, and the store works again by itself as soon as the server answers.  A StorageBusy, so
    whatever already waits out a busy database (a name refresh, timed work, delivery rounds) waits
    this out too."""


class StorageFull(StorageError):
    """A write failed because the disk (or the database's size limit) is full; nothing was written,
    and writes work again by themselves once there is room."""


class StorageGone(StorageError):
    """The database file the bot opened is no longer the one at its path (deleted or replaced
    while the bot ran): nothing more may be written, the process must stop."""


class StorageDamaged(StorageError):
    """The database failed an integrity check while the bot was running."""


class StorageContention(StorageError):
    """A read-modify-write lost a race: what it read changed before it wrote (a compare-and-set
    found another version, or the database chose this transaction to undo to break a deadlock or a
    serialization conflict).  Nothing of the unit of work was kept; running it again from its
    reads is safe, and usually succeeds (see ``retry.retry_contention``)."""


class StaleGame(Exception):
    """The game changed since it was read (another move or action won the race).

    Not a StorageContention and never retried by itself: what the user asked for (this move) was
    meant for a position that is gone, so they are told instead."""
