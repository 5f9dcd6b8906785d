"""Exception hierarchy. Library code raises these; messages say what is wrong and how to fix it."""

import re

# user:password@ (or user@) after a URI's scheme: a tracking URI's credentials, never shown
_CREDENTIALS = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)[^/@\s'\"]+@")


def mask_credentials(text) -> str:
    """``text`` with the credentials of every URI in it masked: ``http://user:pass@host`` becomes
    ``http://***@host`` (the host, port and path are kept: they say which store)."""
    return _CREDENTIALS.sub(lambda m: m["scheme"] + "***@", str(text))


class GsslError(Exception):
    """Base class of every error gssl raises on purpose."""


class ConfigError(GsslError, ValueError):
    """A configuration entry is missing, unknown or invalid."""


class DatasetError(GsslError):
    """A dataset cannot be fetched or parsed."""


class ChecksumError(DatasetError):
    """A downloaded file does not have the sha256 its source declares."""


class SourcesUnavailableError(DatasetError):
    """No source of a dataset file could be reached."""


class CacheError(GsslError):
    """A cache file is truncated, foreign, stale or of the wrong kind."""


class GraphError(GsslError, ValueError):
    """A graph cannot be built from the given data and parameters."""


class SplitError(GsslError, ValueError):
    """A split protocol cannot be satisfied by the dataset."""


class SolverError(GsslError, ValueError):
    """A solver cannot run on the given graph and labels."""


class TrackingError(GsslError):
    """The tracking store is unreachable or does not hold the expected experiment. Its message
    never shows a tracking URI's credentials (:func:`mask_credentials`)."""

    def __init__(self, message="", *args):
        super().__init__(mask_credentials(message), *args)
