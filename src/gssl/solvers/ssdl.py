"""Dictionary-learning classifiers of Tran et al.: SSDL-GA (dictionary, sparse codes with LLE
graph regularization, internal semi-supervised classifier with active points; beta = 0 gives
USSDL) and ``SparseCodingSVM`` (their Table 4: a dictionary learned on the labeled samples only,
then an external one-vs-all linear SVM on the codes).

Samples are rows: X (N, d), codes A (N, p), dictionary D (p, d), scores F = A W^T + b (N, C).
Training uses only the training nodes (labeled + unlabeled); nodes outside ``train_mask`` (in the
pipeline: the test nodes) are coded out of sample (eq. 6) against the training samples. The
numerics are in ``gssl.optim.dictionary_learning`` and ``gssl.optim.ssdl_updates``.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from ..errors import SolverError
from ..optim.dictionary_learning import (init_dictionary, knn_laplacian_operator, lasso_codes,
                                         lle_operator, lle_targets, out_of_sample_codes,
                                         update_dictionary)
from ..optim.ssdl_updates import SSDLModel
from .base import SemiSupervisedClassifier
from .fit_checks import require_features
from .params import Check, Int, Real, StrOptions, nonnegative, positive

# anything np.random.default_rng takes (a large int, a SeedSequence, a list of ints, ...)
_SEED = [None, np.random.Generator, Check(lambda v: np.random.default_rng(v) is not None,
                                          "a seed for numpy.random.default_rng")]
_CODING = {**SemiSupervisedClassifier._parameter_constraints, "n_atoms": [Int(1)],
           "lam": [positive], "alpha": [positive], "beta": [nonnegative], "k": [Int(1)],
           "lle_reg": [nonnegative], "max_iter": [Int(1)], "tol": [nonnegative],
           "sc_max_iter": [Int(1)], "dict_max_iter": [Int(1)], "random_state": _SEED}


class _MaskedFitMixin:
    """fit(..., train_mask=None, predict_mask=None): nodes outside train_mask never enter learning;
    nodes in predict_mask but not in train_mask are coded out of sample; other nodes get zero
    scores (their labels in transduction_ are meaningless). Both default to every node."""

    def fit(self, X, y, n_classes=None, validation=None, train_mask=None, predict_mask=None, *,
            graph=None):
        from ..graphs import as_graph

        graph = as_graph(X, graph)
        n = graph.n_nodes
        self._train_mask = (np.ones(n, bool) if train_mask is None
                            else np.asarray(train_mask, bool).copy())
        self._predict_mask = (np.ones(n, bool) if predict_mask is None
                              else np.asarray(predict_mask, bool).copy())
        if self._train_mask.shape != (n,) or self._predict_mask.shape != (n,):
            raise SolverError(f"train_mask / predict_mask must have one entry per node ({n})")
        y = np.asarray(y)
        if (y[~self._train_mask] != -1).any():
            raise SolverError("labeled nodes must lie inside train_mask")
        return super().fit(graph, y, n_classes=n_classes, validation=validation)  # a Graph now

    def _start_fit(self, graph, name):
        """Dense float64 features, the seeded generator; timings_ emptied."""
        X = require_features(graph, name)
        self.timings_ = {}
        return (np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64),
                np.random.default_rng(self.random_state))

    def _decision_new(self, X_new):
        X_new = np.asarray(X_new.toarray() if sp.issparse(X_new) else X_new, dtype=np.float64)
        return self._code_new(X_new) @ self.coef_.T + self.intercept_

    def _all_scores(self, graph, X, train_idx, train_scores):
        n = graph.n_nodes
        scores = np.zeros((n, self.classes_.size))
        scores[train_idx] = train_scores
        outside = self._predict_mask.copy()
        outside[train_idx] = False
        new = np.flatnonzero(outside)
        if new.size:
            t0 = time.perf_counter()
            scores[new] = self._decision_new(X[new])
            self.timings_["out_of_sample"] = time.perf_counter() - t0
        return scores


class SSDLGA(_MaskedFitMixin, SemiSupervisedClassifier):
    """SSDL-GA: dictionary learning with LLE-regularized sparse codes and an internal
    semi-supervised linear classifier with active points and class probabilities (objective (4),
    solved by the alternate updates of Algorithm 1 from the initialization of section 4.2;
    new points coded by (6)). ``fit`` also takes ``train_mask`` / ``predict_mask``.

    Parameters
    ----------
    n_atoms : int >= 1, default=200
        Number of atoms p.
    lam : float > 0, default=0.3
        Weight lambda of ||A||_1.
    alpha : float > 0, default=1.0
        Bound on the atoms' norms ||D_i||_2.
    beta : float >= 0, default=0.5
        Weight of the LLE code regularization tr(A L_A A^T); 0 gives USSDL.
    gamma : float > 0, default=0.5
        Weight of the classification term.
    mu : float > 0, default=1.0
        Weight of the classifier's ridge ||W||^2 + ||b||^2.
    k : int >= 1, default=8
        LLE neighbours among the training samples.
    r : float >= 1, default=1.7
        Exponent of the class probabilities P^r of the unlabeled samples.
    lle_reg : float >= 0, default=1e-3
        Regularization of the local Gram matrices (times their trace).
    max_iter : int >= 1, default=20
        Outer iterations of Algorithm 1.
    tol : float >= 0, default=1e-4
        Stop when the objective changes by at most tol (relative) between outer iterations.
    sc_max_iter, dict_max_iter : int >= 1, default=50
        FISTA iterations per sparse-coding / dictionary step (the paper fixes 50).
    batch_size : int >= 1 or None, default=None
        None: whole-set sparse coding; an int: the appendix's random batches.
    n_epochs : int >= 1, default=1
        Batch passes per outer iteration.
    classifier_update : {"exact", "wang"}, default="exact"
        "exact": the minimizer of (4)'s classifier subproblem; "wang": the update of the
        authors' released code (``SSDLModel.classifier_update``).
    inner_solver : {"mfista", "authors"}, default="mfista"
        Monotone FISTA, or the released code's plain FISTA with its early stop
        (``gssl.optim.dictionary_learning.AUTHORS_INNER``).
    random_state : None, int, RandomState or Generator, default=None
        Seed of the initial dictionary and of the batches.

    Attributes
    ----------
    dictionary_ : ndarray (p, d)
        Atoms as rows.
    codes_ : ndarray (N_train, p)
        Codes of the training samples (labeled first).
    coef_, intercept_ : ndarray (C, p), ndarray (C,)
        The internal classifier W, b.
    probabilities_ : ndarray (N_u, C)
        Class probabilities P of the unlabeled training samples.
    train_indices_ : ndarray (N_train,)
        The training nodes, labeled first.
    timings_ : dict
        Seconds of the LLE weights, the initialization and out-of-sample coding.
    history_ : list of dict
        Per outer iteration: the objective after each step, seconds per step, FISTA iterations.

    References
    ----------
    K.-H. Tran, F.-M. Ngole-Mboula, J.-L. Starck and V. Prost, "Semi-supervised dictionary
    learning with graph regularization and active points", eqs. (4)-(6), section 4.2,
    Algorithm 1.
    """

    # floors: the defaults reached 75.4 92.7 94.3; one count: the slowest defaults
    __gssl_tags__ = {"name": "ssdl_ga", "family": "dictionary_learning", "floors": {5: 86},
                     "summary": "USSDL = `beta: 0`",
                     "fast": {"n_atoms": 10, "k": 4, "max_iter": 2, "dict_max_iter": 5, "sc_max_iter": 10}}

    _parameter_constraints = {**_CODING, "gamma": [positive], "mu": [positive],
                              "r": [Real(1, None, closed="left")],
                              "batch_size": [Int(1), None], "n_epochs": [Int(1)],
                              "classifier_update": [StrOptions({"exact", "wang"})],
                              "inner_solver": [StrOptions({"mfista", "authors"})]}

    def __init__(self, *, n_atoms=200, lam=0.3, alpha=1.0, beta=0.5, gamma=0.5, mu=1.0, k=8,
                 r=1.7, lle_reg=1e-3, max_iter=20, tol=1e-4, sc_max_iter=50, dict_max_iter=50,
                 batch_size=None, n_epochs=1, classifier_update="exact", inner_solver="mfista",
                 random_state=None):
        self.n_atoms, self.lam, self.alpha, self.beta = n_atoms, lam, alpha, beta
        self.gamma, self.mu, self.k, self.r, self.lle_reg = gamma, mu, k, r, lle_reg
        self.max_iter, self.tol = max_iter, tol
        self.sc_max_iter, self.dict_max_iter = sc_max_iter, dict_max_iter
        self.batch_size, self.n_epochs = batch_size, n_epochs
        self.classifier_update, self.inner_solver = classifier_update, inner_solver
        self.random_state = random_state

    def _fit(self, graph, codes, n_classes):
        X, rng = self._start_fit(graph, "ssdl_ga")
        t0 = time.perf_counter()
        lab = np.flatnonzero((codes >= 0) & self._train_mask)
        unl = np.flatnonzero((codes < 0) & self._train_mask)
        train = np.concatenate([lab, unl])     # labeled first, as in the paper's A = [A^l, A^u]
        self.train_indices_ = train
        Xt = X[train]
        nl, C = lab.size, n_classes
        Y = 2.0 * (codes[lab][:, None] == np.arange(C)) - 1.0
        # LLE weights among the training samples (the graph's V when it covers exactly them)
        K = None
        if self.beta:
            V = None
            if (graph.V is not None and train.size == graph.n_nodes
                    and int((graph.params or {}).get("k", -1)) == self.k):
                V = sp.csr_matrix(graph.V)[train][:, train]
            if V is None:
                from ..graphs.lle import lle_weights

                V = lle_weights(Xt, min(self.k, Xt.shape[0] - 1), self.lle_reg)
            K = lle_operator(V)
        self.timings_["lle"] = time.perf_counter() - t0
        m = SSDLModel(Xt, nl, Y, K, self.lam, self.alpha, self.beta, self.gamma, self.mu, self.r)
        t0 = time.perf_counter()
        A = m.initialize(codes[lab], self.n_atoms, rng, self.sc_max_iter)
        self.timings_["init"] = time.perf_counter() - t0
        prev = None
        self.converged_, self.stop_reason_ = False, f"max_iter={self.max_iter} reached"
        for it in range(1, self.max_iter + 1):
            A, rec = m.alternate(A, rng, sc_max_iter=self.sc_max_iter,
                                 dict_max_iter=self.dict_max_iter, batch_size=self.batch_size,
                                 n_epochs=self.n_epochs, rule=self.classifier_update,
                                 inner=self.inner_solver)
            obj = rec["objective"]
            self.history_.append({"iteration": it, **rec})
            self.n_iter_ = it
            if _settled(self, prev, obj):
                self.converged_ = True
                self.stop_reason_ = f"relative objective change <= tol={self.tol}"
                break
            prev = obj
        self.dictionary_, self.codes_ = m.D, A
        self.coef_, self.intercept_ = m.W, m.b
        self.probabilities_ = m.P
        self._X_train = Xt
        return self._all_scores(graph, X, train, A @ m.W.T + m.b)

    def _code_new(self, X_new):
        if self.beta:
            M, _, _ = lle_targets(self._X_train, self.codes_, X_new, self.k, self.lle_reg)
        else:
            M = np.zeros((X_new.shape[0], self.dictionary_.shape[0]))
        return out_of_sample_codes(X_new, self.dictionary_, self.lam, self.beta, M,
                                   max_iter=4 * self.sc_max_iter)

    def transform(self, X_new):
        """Out-of-sample sparse codes (eq. 6) of new points."""
        return self._code_new(np.asarray(X_new, dtype=np.float64))


def _settled(est, prev, obj) -> bool:
    """The alternation's stop rule, relative objective change <= ``tol`` (from the second
    iteration); its value goes to ``est.criteria_`` (inf after one iteration)."""
    scale = max(abs(prev), 1e-12) if prev is not None else np.nan
    change = abs(prev - obj) / scale if prev is not None else np.inf
    est.criteria_ = {"relative objective change": (float(change), est.tol)}
    return prev is not None and abs(prev - obj) <= est.tol * scale


def _positive_numbers(Cs) -> bool:
    return bool(Cs) and all(isinstance(c, (int, float)) and c > 0 for c in Cs)


class SparseCodingSVM(_MaskedFitMixin, SemiSupervisedClassifier):
    """Sparse coding + SVM (Table 4 of Tran et al.): dictionary and codes learned on the labeled
    samples only (eq. (7)) with the code regularization ``graph_reg``, the Laplacian scaled to
    trace N_l; an external one-vs-all linear SVM on the codes, its C chosen by cross-validation;
    other nodes coded out of sample with the same regularization (LLE targets, or heat-weighted
    kNN means for knn).

    Parameters
    ----------
    graph_reg : {"none", "knn", "lle"}, default="lle"
        Code regularization: none (plain sparse coding, beta ignored), the heat kNN Laplacian or
        the LLE Laplacian of the labeled samples.
    n_atoms : int >= 1, default=128
        Number of atoms p.
    lam : float > 0, default=0.5
        Weight lambda of ||A||_1.
    alpha : float > 0, default=1.0
        Bound on the atoms' norms.
    beta : float >= 0, default=1.0
        Weight of the code regularization.
    k : int >= 1, default=8
        Neighbours of the kNN / LLE graph.
    sigma : float > 0 or None, default=None
        Heat-kernel width of the knn graph (None: the mean kNN distance).
    lle_reg : float >= 0, default=1e-3
        Regularization of the LLE local Gram matrices.
    Cs : sequence of float > 0, default=(0.1, 1.0, 10.0)
        Candidate SVM C values.
    cv : int >= 1, default=5
        Cross-validation folds (at most the smallest class's size; one C or < 2 folds: no CV).
    max_iter, tol, sc_max_iter, dict_max_iter, random_state :
        As in :class:`SSDLGA` (defaults 20, 1e-4, 50, 50, None).

    Attributes
    ----------
    dictionary_, codes_ : ndarray (p, d), ndarray (N_l, p)
        Dictionary and codes of the labeled samples.
    coef_, intercept_ : ndarray (C, p), ndarray (C,)
        The SVM on the codes (binary: the two opposite rows).
    svm_, C_ : LinearSVC, float
        The fitted SVM and its C.
    omega_, sigma_ : float, float or None
        Scale of the Laplacian (N_l / its trace) and the knn heat width used.
    timings_ : dict
        Seconds of out-of-sample coding.

    References
    ----------
    K.-H. Tran, F.-M. Ngole-Mboula, J.-L. Starck and V. Prost, "Semi-supervised dictionary
    learning with graph regularization and active points", eqs. (6)-(7), Table 4.
    """

    # floors: the defaults reached 71.1 83.7 89.4; one count: the slowest defaults
    __gssl_tags__ = {"name": "sc_svm", "family": "dictionary_learning", "floors": {5: 77},
                     "summary": "sparse codes + linear SVM",
                     "fast": {"n_atoms": 10, "k": 4, "max_iter": 2, "dict_max_iter": 5, "sc_max_iter": 10, "cv": 2}}

    _parameter_constraints = {**_CODING, "graph_reg": [StrOptions({"none", "knn", "lle"})],
                              "sigma": [positive, None], "cv": [Int(1)],
                              "Cs": [Check(_positive_numbers, "a non-empty list of positive "
                                                              "numbers")]}

    def __init__(self, *, graph_reg="lle", n_atoms=128, lam=0.5, alpha=1.0, beta=1.0, k=8,
                 sigma=None, lle_reg=1e-3, Cs=(0.1, 1.0, 10.0), cv=5, max_iter=20, tol=1e-4,
                 sc_max_iter=50, dict_max_iter=50, random_state=None):
        self.graph_reg, self.n_atoms, self.lam, self.alpha = graph_reg, n_atoms, lam, alpha
        self.beta, self.k, self.sigma, self.lle_reg = beta, k, sigma, lle_reg
        self.Cs, self.cv, self.max_iter, self.tol = Cs, cv, max_iter, tol
        self.sc_max_iter, self.dict_max_iter = sc_max_iter, dict_max_iter
        self.random_state = random_state

    def _fit(self, graph, codes, n_classes):
        from sklearn.model_selection import GridSearchCV, StratifiedKFold
        from sklearn.svm import LinearSVC

        X, rng = self._start_fit(graph, "sc_svm")
        lab = np.flatnonzero(codes >= 0)
        Xl, nl = X[lab], lab.size
        beta = 0.0 if self.graph_reg == "none" else float(self.beta)
        K, self.omega_, self.sigma_ = None, 1.0, None
        if beta:
            if self.graph_reg == "lle":
                from ..graphs.lle import lle_weights

                K = lle_operator(lle_weights(Xl, min(self.k, nl - 1), self.lle_reg))
            else:
                K, _, self.sigma_ = knn_laplacian_operator(Xl, min(self.k, nl - 1), self.sigma)
            tr = float(K.multiply(K).sum())              # tr(K^T K) = tr(L_A)
            self.omega_ = nl / tr if tr > 0 else 1.0
        Y = 2.0 * (codes[lab][:, None] == np.arange(n_classes)) - 1.0
        m = SSDLModel(Xl, nl, Y, K, self.lam, self.alpha, beta * self.omega_, 0.0, 0.0, 1.0)
        m.W, m.b = np.zeros((n_classes, self.n_atoms)), np.zeros(n_classes)
        m.D = init_dictionary(Xl, np.arange(nl), np.arange(0), codes[lab], self.n_atoms,
                              self.alpha, rng)
        A = lasso_codes(Xl, m.D, self.lam, max_iter=self.sc_max_iter * 4)
        prev = None
        self.converged_, self.stop_reason_ = False, f"max_iter={self.max_iter} reached"
        for it in range(1, self.max_iter + 1):
            A, n_sc = m.sparse_coding(A, None, self.sc_max_iter)
            m.D = update_dictionary(Xl, A, m.D, self.alpha, self.dict_max_iter).x
            obj = m.objective(A)
            self.history_.append({"iteration": it, "objective": obj, "sc_iterations": n_sc})
            self.n_iter_ = it
            if _settled(self, prev, obj):
                self.converged_, self.stop_reason_ = True, f"relative objective change <= tol={self.tol}"
                break
            prev = obj
        self.dictionary_, self.codes_, self._X_train = m.D, A, Xl
        n_splits = int(min(self.cv, np.bincount(codes[lab]).min()))
        svm = LinearSVC(random_state=0, max_iter=20000)
        if n_splits >= 2 and len(self.Cs) > 1:
            search = GridSearchCV(svm, {"C": list(self.Cs)},
                                  cv=StratifiedKFold(n_splits, shuffle=True, random_state=0))
            search.fit(A, codes[lab])
            self.svm_, self.C_ = search.best_estimator_, float(search.best_params_["C"])
        else:
            self.C_ = float(self.Cs[0])
            self.svm_ = svm.set_params(C=self.C_).fit(A, codes[lab])
        coef = np.asarray(self.svm_.coef_)
        icpt = np.asarray(self.svm_.intercept_)
        if n_classes == 2:
            coef, icpt = np.vstack([-coef, coef]), np.r_[-icpt, icpt]
        self.coef_, self.intercept_ = coef, icpt
        return self._all_scores(graph, X, lab, A @ coef.T + icpt)

    def _code_new(self, X_new):
        p = self.dictionary_.shape[0]
        beta = 0.0 if self.graph_reg == "none" else float(self.beta) * self.omega_
        if not beta:
            return out_of_sample_codes(X_new, self.dictionary_, self.lam, 0.0,
                                       np.zeros((X_new.shape[0], p)), max_iter=4 * self.sc_max_iter)
        if self.graph_reg == "lle":
            M, _, _ = lle_targets(self._X_train, self.codes_, X_new, self.k, self.lle_reg)
            rho = beta
        else:  # sum_j 1/2 w_j ||a - a_j||^2 = 1/2 (sum w) ||a - m||^2 + const, m = weighted mean
            from sklearn.neighbors import NearestNeighbors

            k = min(self.k, self._X_train.shape[0])
            dist, idx = NearestNeighbors(n_neighbors=k).fit(self._X_train).kneighbors(X_new)
            w = np.exp(-dist ** 2 / (2 * self.sigma_ ** 2))
            sw = np.maximum(w.sum(axis=1), 1e-300)
            M = np.einsum("ik,ikp->ip", w / sw[:, None], self.codes_[idx])
            rho = 0.5 * beta * sw
        return out_of_sample_codes(X_new, self.dictionary_, self.lam, rho, M,
                                   max_iter=4 * self.sc_max_iter)
