"""The graph object every solver receives: symmetric weights W, optional LLE weights V and features X."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp


@dataclass
class Graph:
    """A weighted undirected graph over n nodes.

    W: symmetric CSR (n, n), non-negative, zero diagonal (checked at the first fit).
    V: LLE barycentric weights (CSR, rows sum to one) when the graph is an LLE graph, else None.
    X: node features (dense or CSR) for RKHS methods; None for graph-only datasets.
    params: the graph's config entry (as built).
    laplacian_kind / laplacian_power: the Laplacian this graph was declared with.
    """

    W: sp.csr_matrix
    V: sp.csr_matrix | None = None
    X: np.ndarray | sp.csr_matrix | None = None
    params: dict = field(default_factory=dict)
    laplacian_kind: str = "normalized"
    laplacian_power: int = 1
    # W passed check_weight_matrix (gssl's builders and cache reader set it; a Graph made by
    # hand is checked once, at its first fit; True by hand: you vouch for W as it is)
    checked: bool = field(default=False, repr=False, compare=False)

    @property
    def n_nodes(self) -> int:
        return self.W.shape[0]

    def laplacian(self, kind: str | None = None, power: int | None = None) -> sp.csr_matrix:
        """L of the declared (or given) kind, raised to ``power``; LLE graphs give L_A = (I-V)^T(I-V)."""
        from .laplacian import laplacian, lle_laplacian, matrix_power

        if self.V is not None and (kind or self.laplacian_kind) == "lle":
            L = lle_laplacian(self.V)
        else:
            L = laplacian(self.W, kind or self.laplacian_kind)
        return matrix_power(L, power if power is not None else self.laplacian_power)

    def degrees(self) -> np.ndarray:
        return np.asarray(self.W.sum(axis=1)).ravel()
