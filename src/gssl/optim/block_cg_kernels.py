"""The compiled updates of :func:`gssl.optim.block_cg.block_cg`'s iterations (numba, cached on
disk), in a module of their own so that importing block_cg (every solver that solves with it, at
planning too) does not import numba."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, boundscheck=False)
def coldots(A, B):
    """sum_i A[i, c] B[i, c] for every column c, summed down the rows."""
    n, k = A.shape
    out = np.zeros(k)
    for i in range(n):
        for c in range(k):
            out[c] += A[i, c] * B[i, c]
    return out


@njit(cache=True, nogil=True, boundscheck=False)
def step(X, R, P, AP, alpha, precond, Z):
    """X += alpha P; R -= alpha AP; with a preconditioner (``precond`` non-empty) Z = M^-1 R.
    Returns (r'z, r'r) per column (r'z is r'r without one)."""
    n, k = X.shape
    rz = np.zeros(k)
    rr = np.zeros(k)
    pre = precond.size > 0
    for i in range(n):
        for c in range(k):
            a = alpha[c]
            X[i, c] += P[i, c] * a
            r = R[i, c] - AP[i, c] * a
            R[i, c] = r
            rr[c] += r * r
            if pre:
                z = r * precond[i]
                Z[i, c] = z
                rz[c] += r * z
    return (rz if pre else rr), rr


@njit(cache=True, nogil=True, boundscheck=False)
def direction(P, Z, beta):
    """P = Z + beta P, in place."""
    n, k = P.shape
    for i in range(n):
        for c in range(k):
            P[i, c] = P[i, c] * beta[c] + Z[i, c]
