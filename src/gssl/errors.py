"""Exception hierarchy. Library code raises these; messages say what is wrong and how to fix it."""


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
    """The tracking store is unreachable or does not hold the expected experiment."""
