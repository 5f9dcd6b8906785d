"""What is read from finished runs: statistics, ranks, plots, the comparison of two result sets,
the tables and report, and ``gssl verify``."""
