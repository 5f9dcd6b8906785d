"""The ``gssl`` command: inspect cache files, list and fetch datasets, list solvers, check configs,
write the reproduction pages."""

from __future__ import annotations

import argparse
import inspect
import re
import shutil
import sys
import textwrap

from .errors import CacheError, ConfigError, GsslError, mask_credentials

DESCRIPTION = """\
The gssl command: inspect gssl cache files (graphs, features, ...), list and
fetch datasets, list the solvers and their parameters, check workflow configs."""
EPILOG = """examples:
  gssl solvers                          every solver with its parameters and defaults
  gssl solvers lap_rls tv_svm           details of the named solvers
  gssl graph info results/graphs/moons/std/knn8.h5
  gssl config check config/config.yaml config/experiments/mtv.yaml
  gssl config names                     the names a config may use (sources, solvers, kinds)
  gssl datasets inspect my.csv --label species   what gssl reads from your data file
  gssl solvers check my_module:MyMethod          your solver against the estimator contract
  gssl reproduction config/experiments/mtv.yaml --results results   docs/reproductions/mtv.md

Run 'gssl COMMAND -h' for the options of a command."""


def _graph_info(args) -> None:
    from .store.h5io import describe, read_attrs

    for path in args.files:
        kind = read_attrs(path)["gssl_kind"]  # a complete gssl file of some kind, or CacheError
        if kind != "graph" and not args.any_kind:
            raise CacheError(f"{path}: a valid gssl {kind!r} file, not a graph; "
                             f"'gssl graph info --any-kind {path}' describes any gssl file")
        print(describe(path))
        if kind == "graph":
            from .graphs.cache import load_graph

            g = load_graph(path)
            deg = g.degrees()
            print(f"nodes: {g.n_nodes}, edges: {g.W.nnz // 2}, degree min/mean/max: "
                  f"{deg.min():.3g}/{deg.mean():.3g}/{deg.max():.3g}, "
                  f"isolated nodes: {int((deg == 0).sum())}")


def _datasets_list(args) -> None:
    from .datasets import get_spec, list_datasets

    for name in list_datasets():
        spec = get_spec(name)
        print(f"{name:<16} {getattr(spec, 'description', '')}")


def _datasets_inspect(args) -> None:
    from .datasets.files import read_file_dataset

    entry = {"source": "file", "path": args.path}
    for key in ("format", "labels", "id"):
        if getattr(args, key):
            entry[key] = getattr(args, key)
    if args.label is not None:
        entry["label"] = int(args.label) if args.label.lstrip("-").isdigit() else args.label
    if args.features:
        entry["features"] = [int(c) if c.isdigit() else c for c in args.features]
    if args.key:
        entry["keys"] = dict(k.split("=", 1) for k in args.key)
    ds = read_file_dataset(entry, args.path)
    print(describe_dataset(ds))
    print(f"\nas a config entry:\n  datasets:\n    my_data: {_flow(entry)}")


def describe_dataset(ds) -> str:
    """Shape, dtype, sparsity, classes with counts and unlabeled points of a Dataset."""
    import numpy as np
    import scipy.sparse as sp

    lines = []
    if ds.X is not None:
        density = ds.X.nnz / max(np.prod(ds.X.shape), 1) if sp.issparse(ds.X) else None
        lines.append(f"features: {ds.X.shape[0]} x {ds.X.shape[1]} {ds.X.dtype}, "
                     + (f"sparse CSR ({100 * density:.3g} % non-zero)" if density is not None else "dense"))
    if ds.W is not None:
        lines.append(f"weight matrix: {ds.W.shape[0]} x {ds.W.shape[1]}, {ds.W.nnz // 2} edges (graph-only)")
    counts = ds.class_counts()
    lines.append(f"classes: {ds.n_classes} ({', '.join(f'{c}: {n}' for c, n in zip(ds.classes, counts))})")
    unl = int((ds.y < 0).sum())
    lines.append(f"unlabeled points: {unl}" + (" (in the graph, never labeled nor scored)" if unl else ""))
    if counts.min() < 2:
        lines.append(f"warning: class '{ds.classes[int(np.argmin(counts))]}' has {counts.min()} point(s): "
                     f"most protocols need more")
    if "-1" in ds.classes.tolist() and not unl:  # (gssl's Python API writes -1 for "unlabeled")
        lines.append("note: '-1' is read as a class; if it marks unlabeled points, leave those "
                     "label cells empty (or NA)")
    return "\n".join(lines)


def _flow(entry: dict) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in entry.items()) + "}"


def _datasets_fetch(args) -> None:
    from pathlib import Path

    import os

    from .pipeline.stages import fetch_dataset

    if args.mirror:
        os.environ["GSSL_DATA_MIRROR"] = args.mirror
    for name in args.names:
        folder = Path(args.raw_dir) / name
        # the manifest is the download rule's output: the workflow reuses these files as they are
        manifest = fetch_dataset(name, folder, folder / "MANIFEST.json")
        for fname, sha in manifest["files"].items():
            print(f"{name}: {folder / fname} sha256 {sha[:12]}")


_NO_DEFAULT = "(required)"


def _width() -> int:
    return max(60, min(100, shutil.get_terminal_size((100, 24)).columns))


def _solver_params(cls) -> list[tuple[str, str]]:
    """(name, default) of each estimator parameter, as its ``__init__`` signature declares them."""
    sig = inspect.signature(cls.__init__)
    out = []
    for name in cls._get_param_names():
        default = sig.parameters[name].default
        out.append((name, _NO_DEFAULT if default is inspect.Parameter.empty else repr(default)))
    return out


def _doc_parts(cls) -> tuple[list[str], dict[str, str]]:
    """The class docstring as paragraphs (numpydoc sections other than Parameters kept as text)
    and the text of each entry of a numpydoc "Parameters" section, if it has one."""
    lines = (inspect.getdoc(cls) or "").splitlines()
    params: dict[str, str] = {}
    body: list[str] = []
    i = 0
    while i < len(lines):
        if (lines[i].strip() == "Parameters" and i + 1 < len(lines)
                and re.fullmatch(r"-{3,}", lines[i + 1].strip())):
            i += 2
            current = None
            while i < len(lines) and not (i + 1 < len(lines) and lines[i].strip()
                                          and re.fullmatch(r"-{3,}", lines[i + 1].strip())):
                line = lines[i]
                if line.strip() and not line.startswith((" ", "\t")):
                    current = line.split(":")[0].strip()
                    for name in (n.strip() for n in current.split(",")):
                        params.setdefault(name, "")
                elif current is not None and line.strip():
                    for name in (n.strip() for n in current.split(",")):
                        params[name] = (params[name] + " " + line.strip()).strip()
                i += 1
            continue
        body.append(lines[i])
        i += 1
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", "\n".join(body)) if p.strip()]
    return paragraphs, params


def _wrap(text: str, indent: str) -> str:
    return textwrap.fill(" ".join(text.split()), width=_width(), initial_indent=indent,
                         subsequent_indent=indent, break_on_hyphens=False)


def _solvers_list(args) -> None:
    from .solvers.registry import solver_class, solver_names

    if args.names[:1] == ["check"]:
        return _solvers_check(args.names[1:])
    if args.names:
        classes = [solver_class(name) for name in args.names]  # ConfigError naming the known solvers
        for i, (name, cls) in enumerate(zip(args.names, classes)):
            if i:
                print()
            _solver_details(name, cls)
        return
    for name, cls in sorted((n, solver_class(n)) for n in solver_names()):
        paragraphs, _ = _doc_parts(cls)
        print(f"{name}  ({cls.__module__}.{cls.__name__})")
        if paragraphs:
            print(_wrap(paragraphs[0], "    "))
        params = ", ".join(f"{p}={d}" for p, d in _solver_params(cls))
        print(textwrap.fill(f"parameters: {params or '(none)'}", width=_width(), initial_indent="    ",
                            subsequent_indent="        ", break_on_hyphens=False))
    print("\n'gssl solvers NAME' shows a solver's full description and parameters.")


def _solvers_check(names: list[str]) -> None:
    from .solvers.checks import check_solver

    if not names:
        raise ConfigError("gssl solvers check: name a solver or an import path package.module:ClassName")
    here = _working_directory_importable()
    failed = 0
    for name in names:
        failures = check_solver(name)
        print(f"{name}: {'ok, the estimator contract holds' if not failures else f'{len(failures)} failure(s)'}")
        for f in failures:
            print(f"  - {f}")
        failed += bool(failures)
        if here is not None and _defined_in(name, here):
            print(f"  note: {name.partition(':')[0]} was found in the working directory ({here}), which "
                  f"is not on PYTHONPATH: the workflow's jobs need it there (PYTHONPATH={here}, or pip "
                  f"install -e the plugin's folder)")
    if failed:
        raise GsslError(f"{failed} of {len(names)} solver(s) break the estimator contract (above)")


def _working_directory_importable():
    """Put the working directory first on sys.path where it is not (the ``gssl`` command's path
    starts with its own bin folder, unlike ``python -m``), so that ``gssl solvers check
    my_method:MyMethod`` finds my_method.py where it is run; the directory, or None when it was
    on the path already."""
    import os
    import sys

    cwd = os.getcwd()
    if any(os.path.abspath(p or os.curdir) == cwd for p in sys.path):
        return None
    sys.path.insert(0, cwd)
    return cwd


def _defined_in(name: str, folder: str) -> bool:
    """Whether solver ``name`` (an import path) was imported from a module below ``folder``."""
    import os
    import sys

    module = sys.modules.get(name.partition(":")[0]) if ":" in name else None
    origin = getattr(module, "__file__", None)
    return bool(origin) and os.path.abspath(origin).startswith(os.path.join(folder, ""))


def _solver_details(name: str, cls) -> None:
    paragraphs, described = _doc_parts(cls)
    print(f"{name}  ({cls.__module__}.{cls.__name__})")
    print()
    for par in paragraphs:
        text = par.splitlines()
        if len(text) > 1 and re.fullmatch(r"-{3,}", text[1].strip()):  # numpydoc section header
            print(f"  {text[0].strip()}\n  {text[1].strip()}")
            text = text[2:]
            if not text:
                continue
            par = "\n".join(text)
        # keep hand-formatted lists and equations as they are; reflow ordinary prose
        if len(text) > 1 and all(t.startswith((" ", "-", "*")) for t in text[1:]):
            print(textwrap.indent(par, "  "))
        else:
            print(_wrap(par, "  "))
        print()
    print("parameters (method entry 'params:' keys, with their defaults):")
    for p, default in _solver_params(cls):
        print(f"  {p} = {default}")
        if described.get(p):
            print(_wrap(described[p], "      "))


def _config_check(args) -> None:
    from pathlib import Path

    from .pipeline.config import load_yaml_files, validate_config

    config = load_yaml_files(args.files)
    # a results folder a run made keeps what its data files hold (results/planning): used, not made
    results = Path(str(config.get("results", "results")))
    validate_config(config, args.schema, planning_cache=results.is_dir())
    print(f"ok: {', '.join(args.files)} ({len(config['experiments'])} experiments)")


def _config_names(args) -> None:
    """The registries' names: what the config schema accepts for each (one list, in gssl)."""
    from .pipeline.config import registries

    known = registries()
    unknown = [r for r in args.registries if r not in known]
    if unknown:
        raise ConfigError(f"unknown registry {unknown[0]!r}; known: {', '.join(known)}")
    for registry, names in known.items():
        if not args.registries or registry in args.registries:
            print(textwrap.fill(f"{registry}: {', '.join(names)}", width=_width(), subsequent_indent="    ",
                                break_on_hyphens=False))


def _verify(args) -> None:
    from .analysis.verify import verify_results

    problems, counts, notes = verify_results(args.results)
    for problem in problems:
        print(mask_credentials(problem))
    for note in notes:
        print(f"note: {note}")
    checked = ", ".join(f"{n} {what}" for what, n in counts.items())
    print(f"{'ok' if not problems else f'{len(problems)} problems'}: checked {checked} in {args.results}")
    if problems:
        raise SystemExit(1)


def _compare(args) -> None:
    from .analysis.compare import compare, format_comparison, load_split_results

    a = load_split_results(args.a, args.experiment)
    b = load_split_results(args.b, args.experiment)
    result = compare(a, b, metrics=args.metric or None, atol=args.atol)
    print(format_comparison(result, max_rows=args.max_rows))
    if len(result.changed) or (args.strict and (len(result.only_a) or len(result.only_b))):
        raise SystemExit(1)


def _reproduction(args) -> None:
    from .analysis.reproduction import write_index, write_page

    if args.config is None:
        print(f"wrote {write_index(args.out, args.configs)}")
        return
    page = write_page(args.config, args.results or ["results"], args.out, args.default_config, args.configs)
    print(f"wrote {page}, its sidecar {page.with_suffix('.json').name} and {page.parent / 'index.md'}")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gssl", description=DESCRIPTION, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)

    graph = sub.add_parser("graph", help="graph cache files").add_subparsers(dest="sub", required=True)
    info = graph.add_parser("info", help="print what a graph cache file holds")
    info.add_argument("files", nargs="+")
    info.add_argument("--any-kind", action="store_true",
                      help="describe any gssl HDF5 file (features, dataset, ...), not only graphs")
    info.set_defaults(func=_graph_info)

    ds = sub.add_parser("datasets", help="dataset registry").add_subparsers(dest="sub", required=True)
    ds.add_parser("list", help="list registered datasets").set_defaults(func=_datasets_list)
    fetch = ds.add_parser("fetch", help="download datasets (GSSL_DATA_MIRROR first)")
    fetch.add_argument("names", nargs="+")
    fetch.add_argument("--raw-dir", default="resources/raw")
    fetch.add_argument("--mirror", default=None, help="folder or http(s) base URL")
    fetch.set_defaults(func=_datasets_fetch)
    inspect_ = ds.add_parser("inspect", help="what gssl reads from a data file of your own (source: file)",
                             description="Reads PATH as a 'source: file' dataset would and prints its "
                                         "shape, dtype, sparsity, classes with counts, unlabeled rows, "
                                         "or the problem that would stop the workflow.")
    inspect_.add_argument("path")
    inspect_.add_argument("--label", help="CSV/TSV: the label column (name, or 0-based index)")
    inspect_.add_argument("--features", nargs="+", help="CSV/TSV: the feature columns (default: all others)")
    inspect_.add_argument("--id", help="CSV/TSV: a column of point ids")
    inspect_.add_argument("--format", help="the format, where the extension does not tell it")
    inspect_.add_argument("--labels", help=".npy/.mtx: the file of labels")
    inspect_.add_argument("--key", action="append", metavar="NAME=KEY",
                          help="npz/h5/mat: array names, e.g. --key X=fea --key y=gnd (repeatable)")
    inspect_.set_defaults(func=_datasets_inspect)

    solvers = sub.add_parser("solvers", help="list the solvers a method entry can use, with their parameters",
                             description="Without NAME: every solver, its summary and its parameters "
                                         "with defaults. With NAMEs: the full description of each. "
                                         "'gssl solvers check NAME_OR_PATH': run the estimator-contract "
                                         "checks on a solver (a name, or package.module:ClassName) and "
                                         "print each failure (exit status 1 if any).")
    solvers.add_argument("names", nargs="*", metavar="NAME", help="solver name(s) to describe in full, or "
                                                                  "'check' and the solvers to check")
    solvers.set_defaults(func=_solvers_list)

    cfg = sub.add_parser("config", help="workflow configs").add_subparsers(dest="sub", required=True)
    check = cfg.add_parser("check", help="validate config files (merged in order)")
    check.add_argument("files", nargs="+")
    check.add_argument("--schema", default=None)
    check.set_defaults(func=_config_check)
    names = cfg.add_parser("names", help="the names a config may use: dataset sources, solvers, graph, "
                                         "Laplacian and protocol kinds (read from gssl's registries)")
    names.add_argument("registries", nargs="*", metavar="REGISTRY",
                       help="show only these (datasets, solvers, laplacians, ...)")
    names.set_defaults(func=_config_names)

    verify = sub.add_parser("verify", help="check every cache file, job output and MLflow run of a "
                                           "results folder against their recorded hashes")
    verify.add_argument("results", nargs="?", default="results", help="results folder (default: results)")
    verify.set_defaults(func=_verify)

    cmp = sub.add_parser("compare", help="per-split results of two runs (results folders or reference "
                                         "CSVs) side by side: what moved beyond its split noise",
                         description="Pairs the two sides' splits of every cell they share and reports "
                                     "each score's mean change, its 95 % interval and the paired "
                                     "Wilcoxon test (Holm-corrected). A change counts when it exceeds "
                                     "--atol and its interval excludes 0. Exit status 1 when any did.")
    cmp.add_argument("a", help="results folder (or CSV of split results): the baseline")
    cmp.add_argument("b", help="results folder (or CSV of split results): the candidate")
    cmp.add_argument("--experiment", default=None, help="compare one experiment only")
    cmp.add_argument("--metric", action="append", help="score to compare (repeatable; default: all shared)")
    cmp.add_argument("--atol", type=float, default=1e-6, help="smallest change that counts (default 1e-6)")
    cmp.add_argument("--max-rows", type=int, default=50, help="rows of the table to print (default 50)")
    cmp.add_argument("--strict", action="store_true", help="also fail when a cell is on one side only")
    cmp.set_defaults(func=_compare)

    rep = sub.add_parser("reproduction", help="write docs/reproductions/<paper>.md from a run's tables and "
                                              "the paper config's reference values, and the index",
                         description="Compares every cell a paper config gives a paper's value for "
                                     "with the run's number (mean ± SE over the draws, or the paper's "
                                     "one-draw statistic) by one stated criterion, per table of the "
                                     "paper, honest and † cells counted apart; each outside-noise "
                                     "cell names its reason (the reference's reasons:, explained "
                                     "under '## Reasons' in <paper>.notes.md beside the page) or is "
                                     "counted unexplained; writes the page, a sidecar .json and "
                                     "index.md. An "
                                     "experiment no results folder holds keeps its cells from the "
                                     "sidecar while its config entries are unchanged. Without "
                                     "CONFIG: rebuild index.md from the sidecars.")
    rep.add_argument("config", nargs="?", help="the paper config, e.g. config/experiments/mtv.yaml")
    rep.add_argument("--results", action="append", metavar="DIR",
                     help="a results folder of the run (repeatable: the first holding an "
                          "experiment's table wins; default: results)")
    rep.add_argument("--out", default="docs/reproductions", help="the pages' folder (default: docs/reproductions)")
    rep.add_argument("--configs", default="config/experiments",
                     help="where the paper configs are, for the index's rows of pages not yet generated")
    rep.add_argument("--default-config", default="config/config.yaml",
                     help="the config the paper config is merged over, as the workflow does")
    rep.set_defaults(func=_reproduction)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except BrokenPipeError:  # output piped into head & co.: stop quietly
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except GsslError as exc:
        print(f"gssl: error: {mask_credentials(exc)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
