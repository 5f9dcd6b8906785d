"""What gssl knows of a solver besides its parameters, declared on its class (as scikit-learn's
estimator tags) as a literal mapping ``__gssl_tags__ = {"name": ..., "family": ..., "floors":
{...}}`` with the fields of :class:`SolverTags`: the config name it registers under and the older
names it still answers to, its family and summary in docs/configuration.md, the accuracy floors
its defaults reach on scikit-learn's digits (tests/test_defaults.py) and the parameters that keep
the contract checks' small fits short.

A new in-tree solver is its module and its test: :mod:`gssl.solvers.registry` reads the literal
from the module's source without importing it (a job imports only the solver it fits, and so
the declaration needs no import either), and every table reads the tags from the class.

Names follow ``<regularizer>_<loss>[_<how it is solved>]`` where a method is one of a family
(``lap_rls``, ``lap_svm_dual``, ``lap_svm_pcg``, ``lap_rls_simplex``, ``tv_svm``,
``cheeger_rls``) and the method's own name otherwise (``poisson``, ``mtv``, ``kmeans``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields

from ..errors import SolverError


@dataclass(frozen=True)
class Family:
    """A row of the solvers table in docs/configuration.md: its title, the papers (the members'
    own, ``SolverTags.paper``, follow), what every member takes (after the members' list), and a
    word on the papers (after them)."""

    title: str
    paper: str
    note: str = ""
    paper_note: str = ""


# a solver's "family" names one of these; the docs' table lists them in this order
FAMILIES = {
    "baselines": Family("baselines", "—"),
    "laplacian_svm": Family("Laplacian SVM", "Melacci & Belkin"),
    "tv_cheeger": Family("TV / Cheeger", "Bresson & Zhang"),
    "clustering": Family("clustering", "Bresson et al. (MTV)"),
    "graph_learning": Family(
        "graph learning",
    "Zhu et al. 2003; Shi, Osher & Zhu 2017; Calder & Slepčev 2019; Calder et al. 2020 (Poisson, "
    "PoissonMBO); Jacobs, Merkurjev & Esedoḡlu 2018 (volume MBO); Garcia-Cardona et al. 2014 "
    "(multiclass MBO); Flores, Calder & Lerman 2022",
    "each takes `class_priors` (`uniform`, `labeled` or a list: labels by the volume-constrained "
    "projection of the scores) and `unreachable` (`error`, or `abstain`: nodes of graph components "
    "without a label get −1)", "agreement with GraphLearning 1.7.5 tested"),
    "dictionary_learning": Family("dictionary learning", "Tran et al."),
}


@dataclass(frozen=True)
class SolverTags:
    """A solver's declaration. ``family``: a key of :data:`FAMILIES`. ``floors``: labels per class
    -> accuracy (%) the constructor defaults must reach on digits, at the counts tested
    (clusterers: clustering accuracy), a few points under what they reached (the comment beside
    the declaration). ``fast``: parameters for the contract checks' small fits (``gssl solvers
    check``), keys the class lacks dropped. ``summary``: Markdown after the name in the family's
    row. ``aliases``: older names a config may still give. ``paper``: the paper(s) of a member
    its family's row does not already name. ``cell_params``: parameters a workflow cell sets
    where the method entry's ``params`` do not (every method of a cell uses the cell's graph:
    label_spreading's ``graph: given``; the library's defaults are the constructor's);
    ``cell_params_unused``: parameters those make unused (label_spreading's ``n_neighbors``, of
    the graph it builds otherwise), refused where an entry gives one without the parameter
    that uses it."""

    name: str
    family: str
    floors: Mapping[int, int]
    summary: str = ""
    aliases: tuple[str, ...] = ()
    fast: Mapping[str, object] = field(default_factory=dict)
    paper: str = ""
    cell_params: Mapping[str, object] = field(default_factory=dict)
    cell_params_unused: tuple[str, ...] = ()


def solver_tags(cls) -> SolverTags | None:
    """The tags ``cls`` itself declares (a subclass does not inherit its parent's name); None
    for a class that declares none (a plugin's, or an import path's). A declaration with an
    unknown field or family is a SolverError here, where the docs and the tests read it."""
    declared = vars(cls).get("__gssl_tags__")
    if declared is None:
        return None
    unknown = sorted(set(declared) - {f.name for f in fields(SolverTags)})
    if unknown or declared.get("family") not in FAMILIES:
        raise SolverError(f"{cls.__name__}.__gssl_tags__: unknown fields {unknown} or family "
                          f"{declared.get('family')!r}; families: {sorted(FAMILIES)}")
    return SolverTags(**declared)
