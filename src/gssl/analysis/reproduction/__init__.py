"""Reproduction pages (issues 32, 50): ``docs/reproductions/<paper>.md`` generated from a workflow
run's tables and the paper config's ``reference:`` entries, and ``docs/reproductions/index.md``
over them.

A page is one paper config (``config/experiments/<paper>.yaml``); its sections are the paper's
tables, named by the references' citations ("<paper>, <table>, ..."). Every cell the config gives
a paper's value for is compared with our number by one criterion (:mod:`.criterion`); the numbers
come from the ``aggregate`` rule's CSV (``<results>/tables/<experiment>.csv``) laid out by
:func:`gssl.analysis.tables.paper_tables` (:mod:`.cells`): nothing here recomputes a statistic of
the splits. Honest and † cells (tuned on the scored points) are counted apart (:mod:`.build`);
each outside-noise cell gives its reason, a key of the reference's ``reasons:`` explained under
``## Reasons`` in the hand-written ``<paper>.notes.md`` beside the page (:mod:`.notes`), or says
it is unexplained; methods are named as the paper names them (a method entry's ``label:``).

Each page writes a sidecar ``<paper>.json`` (its cells, counts, commands and wall times) from which
the index is rebuilt (:mod:`.index`), so a page regenerated from one run leaves the other pages'
rows as they were. Within a page, an experiment whose table no results folder holds keeps its
cells from the sidecar when the config's entries for it are unchanged
(:func:`.build.experiment_digest`; a sidecar without digests vouches through the digest of the
whole config file): a paper's long tables can be run in different sessions, and the page says
which cells were kept. The page is rendered by :mod:`.render`; runs, timings and commands are
read by :mod:`.runs`.
"""

from .build import (
                    DIGEST_VERSION,
                    Page,
                    TableSummary,
                    build_page,
                    config_digest,
                    experiment_digest,
                    load_config,
                    reproduced_experiments,
                    table_counts,
)
from .cells import (
                    Cell,
                    experiment_cells,
                    judge,
                    method_label,
                    paper_and_table,
                    reason_for,
                    table_decimals,
)
from .criterion import (
                    CHANCE_OUTSIDE,
                    NO_SE,
                    NOISE_SHARE,
                    OUTSIDE,
                    TOO_NOISY,
                    WITHIN,
                    criterion_text,
                    expected_by_chance,
                    tolerance,
                    too_noisy,
                    verdict,
)
from .index import index_rows, write_index, write_page
from .notes import read_reasons
from .render import page_markdown
from .runs import ENV, command, read_table, wall_seconds

__all__ = [
                    "CHANCE_OUTSIDE",
                    "DIGEST_VERSION",
                    "ENV",
                    "NOISE_SHARE",
                    "NO_SE",
                    "OUTSIDE",
                    "TOO_NOISY",
                    "WITHIN",
                    "Cell",
                    "Page",
                    "TableSummary",
                    "build_page",
                    "command",
                    "config_digest",
                    "criterion_text",
                    "expected_by_chance",
                    "experiment_cells",
                    "experiment_digest",
                    "index_rows",
                    "judge",
                    "load_config",
                    "method_label",
                    "page_markdown",
                    "paper_and_table",
                    "read_reasons",
                    "read_table",
                    "reason_for",
                    "reproduced_experiments",
                    "table_counts",
                    "table_decimals",
                    "tolerance",
                    "too_noisy",
                    "verdict",
                    "wall_seconds",
                    "write_index",
                    "write_page",
]
