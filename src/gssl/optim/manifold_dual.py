"""The dual LapSVM (Belkin, Niyogi & Sindhwani 2006): their hinge-loss (L1) problem with the
unscaled weights of :mod:`gssl.solvers.lapsvm`,

    min_{a, b} sum_{i in L} max(0, 1 - y_i f_i) + gamma_A a'Ka + gamma_I a'KMKa,   f = Ka + b,

(the bias is libsvm's and stays out of the intrinsic term, as in Belkin et al.). Its dual is an SVM
dual over the labeled points with C = 1 and the Gram matrix G = J K (2 gamma_A I + 2 gamma_I M K)^-1 J'
(solved by libsvm through sklearn's SVC(kernel="precomputed")), then
a = (2 gamma_A I + 2 gamma_I M K)^-1 J' Y beta. Relation to Belkin et al.'s scaling
(1/l sum V + gA ||f||^2 + gI/(l+u)^2 f'Lf): gamma_A = l gA, gamma_I = l gI / (l+u)^2.
"""

from __future__ import annotations

import numpy as np
from sklearn.svm import SVC

from ..errors import SolverError


def lapsvm_dual(K, M, lab, Y, gamma_A, gamma_I, tol=1e-3):
    """The two-step dual LapSVM on a precomputed Gram matrix K (n, n) and M = L^p (operator with
    ``dense_times``). ``Y`` (l, C') ±1 targets of the labeled nodes ``lab``.

    Step 1: G = J K A^-1 J' with A = 2 gamma_A I + 2 gamma_I M K (one LU of A), libsvm with C = 1.
    Step 2: alpha = A^-1 J' Y beta. Returns (alpha (n, C'), b (C',), betas, libsvm iterations).
    """
    import scipy.linalg as sla

    n = K.shape[0]
    A = M.dense_times(K) if hasattr(M, "dense_times") else np.asarray(M @ K)
    A *= 2.0 * gamma_I
    A[np.diag_indices(n)] += 2.0 * gamma_A
    try:
        lu = sla.lu_factor(A, overwrite_a=True, check_finite=False)
    except (sla.LinAlgError, ValueError) as exc:
        raise SolverError(f"LapSVMDual: 2 gamma_A I + 2 gamma_I M K cannot be factorized "
                          f"({exc}); increase gamma_A") from exc
    rhs = np.zeros((n, lab.size))
    rhs[lab, np.arange(lab.size)] = 1.0
    Z = sla.lu_solve(lu, rhs, check_finite=False)     # (n, l): A^-1 J'
    G = K[lab] @ Z
    G = 0.5 * (G + G.T)
    alphas, bs, iters, betas = [], [], [], []
    for c in range(Y.shape[1]):
        y = Y[:, c]
        svc = SVC(kernel="precomputed", C=1.0, tol=float(tol))
        svc.fit(G, (y > 0).astype(int))
        coef = np.zeros(lab.size)          # y_i beta_i with sklearn's sign (+ = class 1 = +1)
        coef[svc.support_] = svc.dual_coef_[0]
        alphas.append(Z @ coef)
        bs.append(float(svc.intercept_[0]))
        iters.append(int(np.max(svc.n_iter_)))
        betas.append(coef * y)
    return np.column_stack(alphas), np.asarray(bs), betas, iters
