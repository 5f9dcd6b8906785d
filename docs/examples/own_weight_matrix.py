"""gssl from Python with your own weight matrix W (any symmetric, non-negative SciPy matrix).

    python docs/examples/own_weight_matrix.py
"""
import numpy as np
from sklearn.datasets import load_digits
from sklearn.neighbors import kneighbors_graph

import gssl

X, y = load_digits(return_X_y=True)
A = kneighbors_graph(X, n_neighbors=10, mode="connectivity")
W = A.maximum(A.T)  # symmetric 0/1 kNN graph
y_train = np.full_like(y, -1)
y_train[np.arange(0, y.size, 60)] = y[::60]  # every 60th digit labeled
unlabeled = y_train == -1

for name, params in (("laplace", {}), ("laplace", {"reweighting": "wnll"}), ("poisson", {})):
    model = gssl.make_solver(name, params).fit(W, y_train)  # a weight matrix is taken as the graph
    accuracy = np.mean(model.predict()[unlabeled] == y[unlabeled])
    print(f"{name:8s} {params!s:26s} accuracy: {100 * accuracy:.1f} %")
