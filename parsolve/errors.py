"""Errors a user can act on. Each names the culprit (body, material, file) and the bad value."""


class ParsolveError(Exception):
    """Base of parsolve's errors; `parsolve run` prints it on every rank and exits with 2."""


class InputError(ParsolveError, ValueError):
    """A model input is invalid: the message names the item and the offending value."""


class CollectiveError(ParsolveError):
    """An error raised on some rank(s), re-raised on every rank with the first rank's message."""


class FileFormatError(ParsolveError):
    """A file is not what it claims to be (missing datasets, wrong sizes, foreign layout)."""


class StorageError(ParsolveError):
    """A file could not be written (a full disk, a quota, an I/O error): the message names the
    file, the reason and, from a run, what it kept (results up to a step, the last checkpoint).
    `path`: the file."""

    def __init__(self, message, path=None):
        super().__init__(message)
        self.path = path


def everywhere(exc):
    """Mark `exc` as raised identically on every rank (decided from values equal on all
    ranks, such as reduced sums): the command line prints it once and aborts no rank."""
    exc.collective = True
    return exc
