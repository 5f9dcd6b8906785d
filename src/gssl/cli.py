"""The ``gssl`` command: inspect cache files, list and fetch datasets, check configs."""

from __future__ import annotations

import argparse
import sys

from .errors import GsslError


def _graph_info(args) -> None:
    from .h5io import describe, read_attrs

    for path in args.files:
        kind = read_attrs(path)["gssl_kind"] if args.any_kind else "graph"
        read_attrs(path, kind=kind)
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


def _datasets_fetch(args) -> None:
    from pathlib import Path

    import os

    from .pipeline import fetch_dataset

    if args.mirror:
        os.environ["GSSL_DATA_MIRROR"] = args.mirror
    for name in args.names:
        folder = Path(args.raw_dir) / name
        # the manifest is the download rule's output: the workflow reuses these files as they are
        manifest = fetch_dataset(name, folder, folder / "MANIFEST.json")
        for fname, sha in manifest["files"].items():
            print(f"{name}: {folder / fname} sha256 {sha[:12]}")


def _solvers_list(args) -> None:
    from .solvers.registry import SOLVERS

    for name, cls in sorted(SOLVERS.items()):
        doc = (cls.__doc__ or "").strip().splitlines()
        print(f"{name:<20} {cls.__module__}.{cls.__name__}: {doc[0] if doc else ''}")


def _config_check(args) -> None:
    from .config import load_yaml, validate_config

    config: dict = {}
    for path in args.files:
        _deep_update(config, load_yaml(path) or {})
    validate_config(config, args.schema)
    print(f"ok: {', '.join(args.files)} ({len(config['experiments'])} experiments)")


def _deep_update(base: dict, new: dict) -> None:
    for k, v in new.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            _deep_update(base[k], v)
        else:
            base[k] = v


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gssl", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    graph = sub.add_parser("graph", help="graph cache files").add_subparsers(dest="sub", required=True)
    info = graph.add_parser("info", help="print what a graph cache file holds")
    info.add_argument("files", nargs="+")
    info.add_argument("--any-kind", action="store_true", help="accept any gssl HDF5 file")
    info.set_defaults(func=_graph_info)

    ds = sub.add_parser("datasets", help="dataset registry").add_subparsers(dest="sub", required=True)
    ds.add_parser("list", help="list registered datasets").set_defaults(func=_datasets_list)
    fetch = ds.add_parser("fetch", help="download datasets (GSSL_DATA_MIRROR first)")
    fetch.add_argument("names", nargs="+")
    fetch.add_argument("--raw-dir", default="resources/raw")
    fetch.add_argument("--mirror", default=None, help="folder or http(s) base URL")
    fetch.set_defaults(func=_datasets_fetch)

    sub.add_parser("solvers", help="list the solver names a method entry can use").set_defaults(
        func=_solvers_list)

    cfg = sub.add_parser("config", help="workflow configs").add_subparsers(dest="sub", required=True)
    check = cfg.add_parser("check", help="validate config files (merged in order)")
    check.add_argument("files", nargs="+")
    check.add_argument("--schema", default=None)
    check.set_defaults(func=_config_check)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except GsslError as exc:
        print(f"gssl: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
