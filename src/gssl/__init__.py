"""gssl: reproducible benchmarking of graph-based semi-supervised learning and clustering."""

__version__ = "0.1.0"
