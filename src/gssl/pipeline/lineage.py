"""The lineage chain of a results folder: data -> features -> graph, data -> splits, and the job
outputs (runs) computed from a cell's files, each link checked by content digest
(:mod:`gssl.store.lineage`). The logging job checks every output it logs (nothing computed from a
file that is no longer there reaches MLflow); ``gssl verify`` walks the whole chain and names the
first link that breaks, with the command that rebuilds it."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import CacheError
from ..store.lineage import LINEAGE_TAG, check_inputs, digest, matches, rebuild_hint
from . import paths

JOB_FOLDERS = ("runs", "selection")  # a solve job's, a grid job's outputs
CELL_PARTS = ("experiment", "dataset", "prep", "graph", "method", "protocol")


def job_cell(results, output) -> dict | None:
    """The wildcards of a solve or grid job's output from its path under ``results`` (what the
    workflow asked of it, whatever the file holds); None for a path of another shape."""
    try:
        rel = Path(output).resolve().relative_to(Path(results).resolve())
    except ValueError:
        return None
    if len(rel.parts) != 8 or rel.parts[0] not in JOB_FOLDERS:
        return None
    return dict(zip(CELL_PARTS, rel.parts[1:7]))


def cell_files(results, cell: dict) -> dict:
    """The cache files a cell's jobs read: data, features, graph, splits."""
    return {"data": paths.path(results, paths.DATA, **cell),
            "features": paths.path(results, paths.FEATURES, **cell),
            "graph": paths.path(results, paths.GRAPH, **cell),
            "splits": paths.path(results, paths.SPLITS, **cell)}


def cache_links(results, path) -> tuple[str, dict] | None:
    """(rule, {input name: input path}) of a cache file under ``results``: what it was built from."""
    try:
        rel = Path(path).resolve().relative_to(Path(results).resolve())
    except ValueError:
        return None
    parts, data = rel.parts, None
    if parts[0] == "features" and len(parts) == 3:
        data = paths.path(results, paths.DATA, dataset=parts[1])
        return "features", {"data": data}
    if parts[0] == "graphs" and len(parts) == 4:
        return "graph", {"features": paths.path(results, paths.FEATURES, dataset=parts[1], prep=parts[2])}
    if parts[0] == "splits" and len(parts) == 3:
        return "splits", {"data": paths.path(results, paths.DATA, dataset=parts[1])}
    return None


def check_cache_link(results, path) -> list[str]:
    """The file ``path`` against the files its folder says it was built from (each that exists;
    a missing one is reported on its own)."""
    from ..store.h5io import read_attrs

    found = cache_links(results, path)
    if found is None:
        return []
    rule, inputs = found
    try:
        check_inputs(path, read_attrs(path, rule=rule), rule,
                     **{k: v for k, v in inputs.items() if Path(v).exists()})
    except CacheError as exc:
        return [str(exc)]
    return []


def check_job_output(results, output, blocks: list[dict] | None = None,
                     trees: list[dict] | None = None, pending=None) -> list[str]:
    """A solve or grid job's output (its ``blocks``, read if not given) and the run trees its
    pending-runs file ``pending`` holds (``trees``, optional) against the cell its path names: the wildcards
    it records, and the content digest of each file it was computed from, against the cache
    files now at the cell's paths. Outputs written before lineage was recorded are checked by
    their wildcards only."""
    from .stages import read_blocks

    cell = job_cell(results, output)
    if cell is None:
        return []
    fix = rebuild_hint(output, None)
    if blocks is None:
        try:
            blocks = read_blocks(output)
        except (OSError, ValueError, KeyError) as exc:
            return [f"{output}: not a readable job output ({exc!r}): {fix}"]
    files = cell_files(results, cell)
    problems = []
    for block in blocks:
        other = {k: block.get(k) for k in CELL_PARTS if block.get(k) != cell[k]}
        if other:
            return [f"{output}: holds the runs of {other}, not of its place in the results folder "
                    f"({ {k: cell[k] for k in other} }): a job output copied in? {fix}"]
        problems += _digests_differ(output, block.get("inputs"), files, fix)
        if problems:
            return problems
    for tree in trees or ():
        tags = tree["run"].get("tags", {})
        where = pending or output
        other = {k: tags[f"gssl.{k}"] for k in CELL_PARTS if tags.get(f"gssl.{k}", cell[k]) != cell[k]}
        if other:
            return [f"{where}: holds the runs of {other}, not of its place in the results folder: "
                    f"{rebuild_hint(output, None)} (it rewrites both)"]
        recorded = tags.get(LINEAGE_TAG)
        if recorded is not None:
            problems += _digests_differ(where, json.loads(recorded), files, rebuild_hint(output, None),
                                        what="its runs were")
            if problems:
                return problems
    return problems


def _digests_differ(output, recorded: dict | None, files: dict, fix: str,
                    what: str = "it was") -> list[str]:
    for name, want in (recorded or {}).items():
        path = files.get(name)
        if path is None:
            continue
        if not Path(path).exists():
            return [f"{output}: {what} computed from {path}, which no longer exists: {fix}"]
        try:
            same = matches(want, path)
        except CacheError as exc:
            return [f"{output}: {exc}"]
        if not same:
            return [f"{output}: {what} computed from a {name} file with content_sha256 {str(want)[:12]}..., "
                    f"but {path} now has {digest(path)[:12]}...: its numbers are not those of the "
                    f"files in place: {fix}"]
    return []
