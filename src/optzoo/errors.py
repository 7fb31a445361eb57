"""Exceptions of optzoo.  Each message names the argument at fault and what was expected."""


class OptzooError(Exception):
    """Base class of optzoo's own errors."""


class ConfigError(OptzooError, ValueError):
    """A bad configuration: unknown slug, preset or override key, or an ill-typed value."""


class NotImplementedPaper(OptzooError):
    """The paper is registered but its reproduction is planned, not implemented."""


class ClairvoyanceError(OptzooError, RuntimeError):
    """A non-clairvoyant algorithm asked for information it may not see (a job's true size)."""


class StoreError(OptzooError):
    """The result store is unreadable beyond a torn last line."""


class BackendError(OptzooError):
    """The execution backend could not be reached (e.g. no Ray cluster at the given address)."""
