"""The package version, in a module of its own: importing it does not pull in gssl/__init__.py
(whose package would otherwise enter every rule's code hash as every file below it)."""

__version__ = "0.1.0"
