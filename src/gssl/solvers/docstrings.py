"""The numpydoc paragraphs several solvers share, written once (``SHARED``), and :func:`documented`,
the class decorator that fills them into a solver's docstring.

A class docstring names a shared block by a placeholder on a line of its own, indented as the
entries around it: ``%(graph_learner_parameters)s``. A parameter's default is read from the class's
signature, so the page never disagrees with the code. A family that documents every parameter from
one table of its own (the TV family, :mod:`gssl.solvers.tv`) writes ``%(sections)s`` instead:
Parameters from the signature and its table, Attributes from the class's ``_attributes``.
"""

from __future__ import annotations

import inspect
import re

_PLACEHOLDER = re.compile(r"%\((\w+)\)s")
_INDENT = "\n    "                # an entry's line in a class docstring
_TEXT_INDENT = "\n        "       # the lines of its description

# block name -> its entries (name, numpydoc type, description; "\n" breaks a long description)
SHARED: dict[str, tuple[tuple[str, str, str], ...]] = {
    # the Laplacian kernel machines (gssl.solvers.lapsvm, LaplacianRLS of gssl.solvers.rls)
    "manifold_parameters": (
        ("kernel", "str or dict", "Kernel spec (:func:`gssl.optim.kernels.validate_kernel`)."),
        ("gamma_A", "float > 0", "Ambient (RKHS norm) weight."),
        ("gamma_I", "float >= 0", "Intrinsic (graph smoothness) weight (0: no graph term)."),
        ("laplacian", "str or None", "Laplacian kind (unnormalized, normalized, random_walk or lle:\n"
                                     "``gssl.graphs.laplacian.LAPLACIAN_KINDS``); None: the graph's own."),
        ("laplacian_power", "int >= 1 or None", "Power p of M = L^p; None: the graph's own."),
    ),
    "manifold_attributes": (
        ("classes_", "ndarray (C,)", "Class labels."),
        ("X_fit_", "ndarray (n, d)", "Features of every graph node (the kernel expansion points)."),
        ("dual_coef_", "ndarray (n, C')", "Expansion coefficients alpha, one column per one-vs-all "
                                          "problem (C' = 1 when binary)."),
        ("intercept_", "ndarray (C',)", "Biases b."),
        ("decision_function_", "ndarray (n, C)", "f = K alpha + b of every node (binary: [-f, f])."),
        ("transduction_", "ndarray (n,)", "Labels of every node."),
    ),
    # every graph learner (gssl.solvers.graph_learner)
    "graph_learner_parameters": (
        ("class_priors", 'None, "uniform", "labeled" or list of float',
         "Class fractions for the volume-constrained label decision (None: arg-max)."),
        ("unreachable", '{"error", "abstain"}',
         "Nodes in components without a labeled node: SolverError, or label -1."),
    ),
    "unreachable": (
        ("unreachable", '{"error", "abstain"}',
         "Nodes in components without a labeled node: SolverError, or label -1."),
    ),
    "graph_learner_attributes": (
        ("classes_", "ndarray (C,)", "Class labels."),
        ("transduction_", "ndarray (n,)", "Labels of every node (-1: unreachable, abstained)."),
    ),
    "cg_attributes": (
        ("n_iter_", "int", "CG iterations."),
        ("converged_, stop_reason_", "", "Whether CG reached ``tol``."),
    ),
    "fit_metrics_": (
        ("fit_metrics_", "dict", "``unreached_nodes`` and, with class priors, ``volume_misfit``."),
    ),
    "fixed_steps_attributes": (
        ("converged_, stop_reason_", "", 'A fixed number of steps: True, "max_iter".'),
        ("fit_metrics_", "dict", "``unreached_nodes`` and, with class priors, ``volume_misfit``."),
    ),
}


def _default(value) -> str:
    """A default as the docstrings write it: strings in double quotes, 1e-6 for 1e-06."""
    return f'"{value}"' if isinstance(value, str) else re.sub(r"e([+-])0(\d)", r"e\1\2", repr(value))


def entry(name: str, kind: str, text: str, defaults: dict) -> str:
    """One numpydoc entry; a constructor parameter's type line ends with its default (an entry of
    several names, such as "converged_, stop_reason_", has no type)."""
    head = f"{name} : {kind}" if kind else name
    head += f", default={_default(defaults[name])}" if name in defaults else ""
    return head + _TEXT_INDENT + text.replace("\n", _TEXT_INDENT)


def section(title: str, entries: list[str]) -> str:
    """A numpydoc section of rendered entries."""
    return f"{title}{_INDENT}{'-' * len(title)}{_INDENT}" + _INDENT.join(entries)


def documented(params: dict | None = None, attributes: dict | None = None, **texts: str):
    """The class decorator that fills a solver's docstring placeholders: a block of ``SHARED``,
    ``%(sections)s`` (Parameters of every constructor argument from ``params``, which the class's
    ``_param_docs`` overrides, and Attributes of its ``_attributes`` from ``attributes``; each a
    name -> (numpydoc type, description) table) or a text given by keyword (``ref=...``).
    An unknown placeholder is a TypeError at import, naming it."""

    def fill(cls):
        defaults = {name: p.default for name, p in inspect.signature(cls.__init__).parameters.items()
                    if name != "self"}

        def block(match):
            key = match.group(1)
            if key in texts:
                return texts[key]
            if key in SHARED:
                return _INDENT.join(entry(*e, defaults) for e in SHARED[key])
            if key == "sections" and params is not None:
                docs = {**params, **getattr(cls, "_param_docs", {})}
                return (section("Parameters", [entry(n, *docs[n], defaults) for n in defaults])
                        + "\n" + _INDENT
                        + section("Attributes", [entry(a, *attributes[a], {})
                                                 for a in cls._attributes]))
            raise TypeError(f"{cls.__name__}'s docstring names %({key})s, which is neither a block "
                            f"of gssl.solvers.docstrings.SHARED ({', '.join(SHARED)}) nor a text "
                            f"given to documented()")

        cls.__doc__ = _PLACEHOLDER.sub(block, cls.__doc__)
        return cls

    return fill
