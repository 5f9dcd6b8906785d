"""Graph-based active learning: which nodes to label next.

:mod:`~gssl.active.acquisitions` (uncertainty sampling, VOpt, Sigma-opt, model change, model
change + VOpt, random sampling), :mod:`~gssl.active.loop` (the query loop over any gssl
classifier), :mod:`~gssl.active.registry` (names, import paths and ``gssl.acquisitions`` entry
points). The numerics live in :mod:`gssl.optim.active`.
"""

from .acquisitions import (ACQUISITIONS, Acquisition, ModelChange, ModelChangeVOpt,  # noqa: F401
                           RandomSampling, SigmaOpt, UncertaintySampling, VOpt)
from .loop import ActiveLearner, QueryHistory, run_queries  # noqa: F401
from .registry import acquisition_class, make_acquisition  # noqa: F401
