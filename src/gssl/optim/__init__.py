"""Shared numerics of the solvers (linear solves for now)."""

from .linalg import relative_residual, solve_dense, solve_spd

__all__ = ["relative_residual", "solve_dense", "solve_spd"]
