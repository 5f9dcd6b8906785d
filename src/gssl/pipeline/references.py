"""Cross-references of a config's ids: experiments name defined datasets, methods and protocols;
selections, references and grids fit the methods they name; what the solvers and split
protocols would refuse, found before any job."""

from __future__ import annotations

import fnmatch
import json

from ..errors import ConfigError
from ..metrics import SCORE_PREFIXES
from ..splits import is_predict
from .plan import get_dotted, grid_values, grid_variants, set_dotted

SECTIONS = ("datasets", "preprocessing", "graphs", "methods", "protocols")


def reference_problems(config: dict) -> list[str]:
    """One line per id that does not resolve, and per selection, reference, grid, solver or
    protocol that the jobs would refuse."""
    from ..datasets import graph_only_datasets

    problems, graph_only = [], graph_only_datasets()
    for exp, entry in config["experiments"].items():
        for section in SECTIONS:
            for ident in entry[section]:
                if ident not in config[section]:
                    known = ", ".join(sorted(config[section])) or "none"
                    problems.append(f"experiment '{exp}' names unknown {section} id '{ident}' "
                                    f"(defined: {known})")
        for ds in entry["datasets"]:
            if ds in config["datasets"] and config["datasets"][ds]["source"] in graph_only:
                problems += [f"experiment '{exp}': dataset '{ds}' is graph-only, so graph '{g}' must have "
                             f"kind: precomputed" for g in entry["graphs"]
                             if config["graphs"].get(g, {}).get("kind") != "precomputed"]
                problems += [f"experiment '{exp}': dataset '{ds}' is graph-only (no features), so "
                             f"preprocessing '{p}' must be an empty list" for p in entry["preprocessing"]
                             if config["preprocessing"].get(p)]
        problems += _selection_problems(config, exp, entry)
        problems += _paper_reference_problems(exp, entry)
        problems += _predict_problems(config, exp, entry)
        problems += _active_problems(config, exp, entry)
    problems += _method_problems(config["methods"])
    problems += _protocol_problems(config["protocols"])
    for exp in config.get("run", []):
        if exp not in config["experiments"]:
            problems.append(f"run names unknown experiment '{exp}' "
                            f"(defined: {', '.join(sorted(config['experiments']))})")
    return problems


def _predict_problems(config: dict, exp: str, entry: dict) -> list[str]:
    """Protocols of kind predict score nothing: an experiment needs a scoring protocol beside
    them (its tables), a selection cannot choose on them, and a registered dataset (every point
    labeled; a plugin's data may have rows without a label) has no row for them to predict."""
    from ..datasets import FILE_SOURCE, get_spec

    predict = [p for p in entry["protocols"] if is_predict(config["protocols"].get(p))]
    if not predict:
        return []
    problems = []
    if len(predict) == len(entry["protocols"]):
        problems.append(f"experiment '{exp}': every protocol ({', '.join(predict)}) is kind predict, "
                        f"which scores nothing; add a scoring protocol beside it for the tables, "
                        f"e.g. protocols: {{lpc1: {{kind: labels_per_class, n: 1}}}}")
    sel = (entry.get("selection") or {}).get("protocol")
    if sel is not None and is_predict(config["protocols"].get(sel)):
        problems.append(f"experiment '{exp}': selection protocol '{sel}' is kind predict, which "
                        f"scores nothing to choose by; choose on a scoring protocol")
    for ds in entry["datasets"]:
        source = config["datasets"].get(ds, {}).get("source")
        if source is None or source == FILE_SOURCE:
            continue  # a data file's rows: the data preflight reads them
        try:
            kind = get_spec(source).kind
        except ConfigError:  # an unknown source: the schema reports it
            continue
        if kind != "plugin":
            problems.append(f"experiment '{exp}': protocol '{predict[0]}' (kind predict) predicts "
                            f"the rows without a label, and dataset '{ds}' (source {source}) labels "
                            f"every row; use it on a source: file dataset with empty label cells")
    return problems


def _active_problems(config: dict, exp: str, entry: dict) -> list[str]:
    """Active-learning methods and protocols that cannot run together (gssl.active.protocol)."""
    if not any(config["methods"].get(m, {}).get("active") for m in entry["methods"]) and \
            not any(config["protocols"].get(p, {}).get("active") for p in entry["protocols"]):
        return []
    from ..active.protocol import experiment_problems

    return experiment_problems(config, exp, entry)


def _protocol_problems(protocols: dict) -> list[str]:
    """What the split jobs would refuse (e.g. label_fraction with fraction 1.0), caught here so
    that ``gssl config check`` and the workflow's DAG stage agree."""
    from ..splits import validate_protocol

    problems = []
    for pid, spec in protocols.items():
        try:
            validate_protocol(spec)
        except ConfigError as exc:
            problems.append(f"protocols.{pid}: {exc}")
    return problems


def _method_problems(methods: dict) -> list[str]:
    """Unknown solver names or parameters (of every grid point), caught before any job starts."""
    from ..solvers.registry import make_solver

    problems = []
    for mid, entry in methods.items():
        grid = entry.get("grid") or {}
        nested = [k for k in grid for other in grid if other.startswith(k + ".")]
        if nested:
            problems.append(f"method '{mid}': grid key '{nested[0]}' contains another grid key; "
                            f"give either the whole value or its parts")
            continue
        points = grid_variants(entry) if grid else []
        if len({v for v, _ in points}) < len(points):
            problems.append(f"method '{mid}': its grid lists the same point twice (repeated "
                            f"values); each point must be different")
            continue
        for variant, params in points or [("", entry.get("params"))]:
            try:
                solver = make_solver(entry["solver"], params)
            except (ConfigError, TypeError, ValueError) as exc:
                where = f" (grid point {variant}: {grid_values(entry, variant)})" if variant else ""
                problems.append(f"method '{mid}'{where}: {exc}")
                break
        else:
            problems += _class_prior_problems(mid, entry, solver)
        if entry.get("active") is not None:
            from ..active.protocol import validate_method_active

            try:
                validate_method_active(entry["active"])
            except ConfigError as exc:
                problems.append(f"method '{mid}': {exc}")
    return problems


def _class_prior_problems(mid: str, entry: dict, solver) -> list[str]:
    """A method-level ``class_priors`` needs class scores to correct, and is refused where the
    solver has the option itself (one place to set it)."""
    from sklearn.base import is_classifier

    from ..solvers.class_priors import check_class_priors

    if entry.get("class_priors") is None:
        return []
    if "class_priors" in solver.get_params():
        return [f"method '{mid}': solver '{entry['solver']}' takes class_priors as a parameter; "
                f"set params.class_priors instead of the method-level key"]
    if not is_classifier(solver):
        return [f"method '{mid}': class_priors corrects class scores, but solver "
                f"'{entry['solver']}' is not a classifier with class scores"]
    try:
        check_class_priors(f"method '{mid}'", entry["class_priors"])
    except ConfigError as exc:
        return [str(exc)]
    return []


def _selection_problems(config: dict, exp: str, entry: dict) -> list[str]:
    """A selection must name a protocol and, unless it reproduces a paper's tuning on the scored
    points, never read the label of a point that a reported protocol scores."""
    methods = config["methods"]
    problems = []
    for m in entry["methods"]:
        src = methods.get(m, {}).get("selected_as")
        if src is None:
            continue
        if methods[m].get("grid"):
            problems.append(f"method '{m}' has both a grid and selected_as: keep one")
        elif src not in entry["methods"] or not methods.get(src, {}).get("grid"):
            problems.append(f"experiment '{exp}': method '{m}' is selected_as '{src}', which must be "
                            f"a method of the experiment with a grid")
        else:
            problems += _selected_as_problems(m, methods[m], src, methods[src])
    gridded = [m for m in entry["methods"] if methods.get(m, {}).get("grid")]
    sel = entry.get("selection")
    if sel is None:
        return problems + [f"experiment '{exp}': method '{m}' has a grid but the experiment names "
                           f"no selection (add selection: {{protocol: <id>}})" for m in gridded]
    if not gridded:
        return problems + [f"experiment '{exp}': selection is given but none of its methods has a grid"]
    proto = sel["protocol"]
    if proto not in config["protocols"]:
        return problems + [f"experiment '{exp}': selection names unknown protocols id '{proto}' "
                           f"(defined: {', '.join(sorted(config['protocols']))})"]
    if sel.get("per_split"):
        return problems + _per_split_problems(config, exp, entry, sel)
    if sel.get("scored_points"):
        return problems
    if proto in entry["protocols"]:
        return problems + [f"experiment '{exp}': selection protocol '{proto}' is also a reported "
                           f"protocol; choose on other splits, or set selection.per_split: true "
                           f"with a metric on the validation points, or selection.scored_points: "
                           f"true to reproduce a paper that tuned on its scored points"]
    hold = config["protocols"][proto].get("holdout") or {}
    if hold.get("part") != "inside":
        problems.append(f"experiment '{exp}': selection protocol '{proto}' must draw inside a "
                        f"holdout set (holdout: {{fraction: f, part: inside}}) so that it never "
                        f"reads the label of a point the reported protocols score; or set "
                        f"selection.scored_points: true")
    for p in entry["protocols"]:
        if is_predict(config["protocols"].get(p)):  # scores nothing: may fit on the holdout's labels
            continue
        ph = config["protocols"].get(p, {}).get("holdout") or {}
        if ph != {"fraction": hold.get("fraction"), "part": "outside"}:
            problems.append(f"experiment '{exp}': reported protocol '{p}' must leave the selection "
                            f"holdout unused: give it holdout: {{fraction: {hold.get('fraction')}, "
                            f"part: outside}} (selection protocol '{proto}')")
    return problems


def _selected_as_problems(mid: str, entry: dict, src: str, source: dict) -> list[str]:
    """Every value the source's grid can choose must fit the method's own params, which must not
    set those keys themselves (the choice would silently replace them)."""
    from ..solvers.registry import make_solver

    own = [k for k in source["grid"] if _has_dotted(entry.get("params") or {}, k)]
    if own:
        return [f"method '{mid}' is selected_as '{src}' but sets {', '.join(own)} itself; remove "
                f"them from its params (the selection chooses them)"]
    for variant, params in grid_variants(source):
        mine = json.loads(json.dumps(entry.get("params") or {}))
        try:
            for key in source["grid"]:
                set_dotted(mine, key, get_dotted(params, key))
            make_solver(entry["solver"], mine)
        except (ConfigError, TypeError, ValueError) as exc:
            return [f"method '{mid}' is selected_as '{src}', but grid point {variant} "
                    f"({grid_values(source, variant)}) does not fit it: {exc}"]
    return []


def _has_dotted(d: dict, key: str) -> bool:
    try:
        get_dotted(d, key)
    except (KeyError, TypeError):
        return False
    return True


def _per_split_problems(config: dict, exp: str, entry: dict, sel: dict) -> list[str]:
    """Per-split selection is honest when each split chooses on its own validation points, which
    no reported score of that split counts."""
    proto, problems = sel["protocol"], []
    if entry["protocols"] != [proto]:
        problems.append(f"experiment '{exp}': per-split selection chooses for the splits of "
                        f"'{proto}', so it must be the experiment's only protocol (it reports "
                        f"{', '.join(entry['protocols'])})")
    spec = config["protocols"][proto]
    if not spec.get("validation"):
        problems.append(f"experiment '{exp}': per-split selection needs validation points, but "
                        f"protocol '{proto}' has none (a melacci_cv protocol with validation: n)")
    if not sel.get("scored_points"):
        for key in ("metric", "tie_break"):
            name = sel.get(key, "error_unlabeled" if key == "metric" else None)
            if name is not None and not name.endswith("_validation"):
                problems.append(f"experiment '{exp}': per-split selection.{key} '{name}' would read "
                                f"labels the split scores; use a metric on the validation points "
                                f"(e.g. error_validation), or set selection.scored_points: true")
    return problems


def _paper_reference_problems(exp: str, entry: dict) -> list[str]:
    """Every id a reference or the tuned list names must be one of the experiment's own."""
    problems = []
    refs = entry.get("reference") or []
    for ref in refs if isinstance(refs, list) else [refs]:
        if ref.get("dataset") and ref["dataset"] not in entry["datasets"]:
            problems.append(f"experiment '{exp}': reference dataset '{ref['dataset']}' is not one of "
                            f"its datasets ({', '.join(entry['datasets'])})")
        for method, row in ref["values"].items():
            if method not in entry["methods"]:
                problems.append(f"experiment '{exp}': reference names method '{method}', which is not "
                                f"one of its methods ({', '.join(entry['methods'])})")
            problems += [f"experiment '{exp}': reference for method '{method}' names protocol "
                         f"(column) '{p}', which is not one of its protocols "
                         f"({', '.join(entry['protocols'])})" for p in row if p not in entry["protocols"]]
        cells = [f"{m}/{p}" for m, row in ref["values"].items() for p in row]
        problems += [f"experiment '{exp}': reference reasons pattern '{pattern}' matches none of its "
                     f"cells (method id/protocol id: {', '.join(cells[:4])}{', ...' if len(cells) > 4 else ''})"
                     for pattern in ref.get("reasons") or {}
                     if not any(fnmatch.fnmatchcase(c, pattern) for c in cells)]
    problems += [f"experiment '{exp}': tuned_on_scored_points names '{m}', which is not one of its "
                 f"methods" for m in entry.get("tuned_on_scored_points") or [] if m not in entry["methods"]]
    lowest = (entry.get("paper_statistic") or {}).get("lowest", "")
    if lowest.startswith(SCORE_PREFIXES):
        problems.append(f"experiment '{exp}': paper_statistic.lowest '{lowest}' reads labels: picking "
                        f"the split with the lowest score would report a cherry-picked draw; name a "
                        f"label-free quantity such as solver_discrete_energy")
    return problems
