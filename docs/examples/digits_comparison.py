"""gssl from Python: scikit-learn's digits, one graph, three methods, a comparison.

    python docs/examples/digits_comparison.py
"""
import numpy as np
from sklearn.datasets import load_digits

import gssl

X, y = load_digits(return_X_y=True)
G = gssl.build_graph(X, k=10, weights="gaussian_kth", symmetrize="mean")  # the config's keys
rng = np.random.default_rng(0)
labeled = np.concatenate([rng.choice(np.flatnonzero(y == c), 3, replace=False) for c in range(10)])
y_train = np.full_like(y, -1)  # -1 = unlabeled
y_train[labeled] = y[labeled]
unlabeled = y_train == -1

for name in ("laplace", "poisson", "poisson_mbo"):
    model = gssl.make_solver(name).fit(G, y_train)
    accuracy = np.mean(model.predict()[unlabeled] == y[unlabeled])
    print(f"{name:12s} accuracy on the unlabeled digits: {100 * accuracy:.1f} %")
