"""CSV and TSV files (also gzip-compressed): a header row of distinct names, a label column,
feature columns; every problem a DatasetError naming the file, the line or column, and the fix."""

from __future__ import annotations

import csv
import difflib
import gzip
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..errors import DatasetError
from .labels import MISSING_CELLS, encode_labels

_LIKELY_SEPARATORS = (";", "\t", "|", ",")


def _open_text(path: Path):
    """A table file for reading as text: gzip-compressed ones (by their first bytes) decompressed."""
    with open(path, "rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rt", newline="", encoding="utf-8") if gz else open(path, newline="",
                                                                                 encoding="utf-8")



def read_table(src):
    """(X, y, classes, None, extra) of a table, and of its test file after it (``src.test``: the
    same columns; the rows follow the training file's, ``extra["test_from"]`` the first test
    row). Labels are encoded over both files, so the test file may hold fewer classes."""
    parts = [_read_part(src, src.path)]
    if src.test is not None:
        parts.append(_read_part(src, src.test))
        train, test = parts
        if test["features"] != train["features"] or test["label"] != train["label"]:
            raise DatasetError(f"{src.test}: the test file's columns differ from {src.path}'s (label "
                               f"{test['label']!r} and features {_show(test['features'])}, against "
                               f"{train['label']!r} and {_show(train['features'])}); give both files the "
                               f"same header")
    X = np.vstack([part["X"] for part in parts])
    where = " and ".join(str(part["path"]) for part in parts)
    y, classes = encode_labels(np.concatenate([part["labels"] for part in parts]),
                               f"{where}, column {parts[0]['label']!r}")
    extra = {"label_column": parts[0]["label"], "feature_columns": parts[0]["features"]}
    if parts[0]["ids"] is not None:  # a table's id: column, one string per point of both files
        extra["id_column"] = parts[0]["id"]
        extra["ids"] = np.concatenate([part["ids"] for part in parts]).astype(str)
    if src.test is not None:
        extra["test_from"] = int(parts[0]["X"].shape[0])
        if parts[0]["ids"] is not None:
            _check_ids(np.concatenate([part["ids"] for part in parts]), where, parts[0]["id"],
                       first_test=extra["test_from"], paths=[part["path"] for part in parts])
    return X, y, classes, None, extra


def _read_part(src, path: Path) -> dict:
    """One table file's features, raw labels and ids, checked (ragged rows, names, numbers)."""
    import pandas as pd

    sep = src.sep or ("," if src.format == "csv" else "\t")
    try:
        _check_ragged(path, sep)
        with _open_text(path) as fh:
            df = pd.read_csv(fh, sep=sep, dtype=str, keep_default_na=False, skipinitialspace=True)
    except pd.errors.ParserError as exc:  # pandas names the ragged line
        raise DatasetError(f"{path}: {exc}; every row needs as many fields as the header") from None
    except (pd.errors.EmptyDataError, UnicodeDecodeError, csv.Error, gzip.BadGzipFile, EOFError) as exc:
        raise DatasetError(f"{path}: not a UTF-8 {src.format.upper()} file with a header row ({exc}); "
                           f"save it as UTF-8 text (gzip-compressed is fine)") from None
    columns = list(df.columns)
    label = _column(columns, src.label, path, "label")
    ident = _column(columns, src.id, path, "id") if src.id is not None else None
    if src.features is not None:
        features = [_column(columns, c, path, "features") for c in src.features]
    else:
        features = [c for c in columns if c not in (label, ident)]
    if label in features or (ident is not None and ident in features):
        raise DatasetError(f"{path}: features: lists the label or id column; drop it from features:")
    if not features:
        raise DatasetError(f"{path}: no feature column left beside label {label!r}")
    X = _numeric(df[features], path)
    ids = None
    if ident is not None:
        ids = df[ident].astype(str).str.strip().to_numpy()
        _check_ids(ids, path, ident)
    return {"path": path, "X": X, "labels": df[label].to_numpy(), "label": label, "features": features,
            "id": ident, "ids": ids}


def _check_ids(ids: np.ndarray, where, ident: str, first_test: int | None = None, paths=()) -> None:
    """Each point its own id (within a file, and across a training file and its test file)."""
    import pandas as pd

    ids = pd.Series(ids)
    dup = ids[ids.duplicated(keep=False)]
    if not len(dup):
        return
    if first_test is None:
        lines = [int(i) + 2 for i in dup.index[:6]]
        raise DatasetError(f"{where}: id column {ident!r} repeats an id (lines "
                           f"{lines}; {dup.nunique()} ids repeated): each point needs its own "
                           f"id; remove the duplicated rows")
    first = dup.iloc[0]
    at = [f"{paths[int(i >= first_test)]} line {int(i - first_test * (i >= first_test)) + 2}"
          for i in dup.index[dup == first][:2]]
    raise DatasetError(f"{where}: id column {ident!r} repeats an id in the training and the test "
                       f"file ({'; '.join(at)}): each point needs its own id; a test row must not "
                       f"repeat a training row")


def _column(columns: list, key, path: Path, what: str) -> str:
    if isinstance(key, bool):
        key = None
    if isinstance(key, int):
        if not -len(columns) <= key < len(columns):
            raise DatasetError(f"{path}: {what}: column index {key} is out of range (the header has "
                               f"{len(columns)} columns: {_show(columns)})")
        return columns[key]
    if key not in columns:
        close = difflib.get_close_matches(str(key), [str(c) for c in columns], n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise DatasetError(f"{path}: {what}: no column named {key!r}; the header has {_show(columns)}{hint}")
    return key


def _show(columns: list, n: int = 12) -> str:
    shown = ", ".join(repr(c) for c in columns[:n])
    return shown + (f", ... ({len(columns)} in all)" if len(columns) > n else "")


def _check_ragged(path: Path, sep: str) -> None:
    """Every row has the header's number of fields (pandas would pad a short row with empty
    cells, which reads as an unlabeled point or a missing feature)."""
    with _open_text(path) as fh:
        rows = csv.reader(fh, delimiter=sep, skipinitialspace=True)
        header = next(rows, [])
        n = len(header)
        _check_header(path, header, sep)
        for line, row in enumerate(rows, start=2):
            if row and len(row) != n:
                raise DatasetError(f"{path}: line {line} has {len(row)} fields, the header {n}; every "
                                   f"row needs a value for each column (leave a label cell empty, "
                                   f"with its comma, to mark an unlabeled point)")


def _check_header(path: Path, header: list, sep: str) -> None:
    """A header of distinct names, split by the separator the file uses."""
    if len(header) == 1:  # not a table with this separator: its content is not shown (any file
        # can be named as data, a system file too, and the message must not echo it)
        likely = [s for s in _LIKELY_SEPARATORS if s != sep and header[0].count(s) >= 1]
        if likely:
            shown = "a tab" if likely[0] == "\t" else repr(likely[0])
            raise DatasetError(f"{path}: line 1, the header, is one field ({len(header[0])} characters) split by "
                               f"{sep!r}; the file looks {shown}-separated: add sep: "
                               f"{likely[0]!r} to its dataset entry")
        raise DatasetError(f"{path}: line 1, the header, is one field ({len(header[0])} characters) split by "
                           f"{sep!r}: not a table of named columns; give a {'CSV' if sep == ',' else 'table'} "
                           f"with a header row, or its separator with sep:")
    seen: dict = {}
    for i, name in enumerate(header):
        seen.setdefault(name.strip(), []).append(i)
    repeated = {name: at for name, at in seen.items() if len(at) > 1}
    if repeated:
        name, at = next(iter(repeated.items()))
        raise DatasetError(f"{path}: the header names column {name!r} {len(at)} times (columns "
                           f"{at}, 0-based){f' and {len(repeated) - 1} other name(s) more than once' if len(repeated) > 1 else ''}; "
                           f"give each column its own name")


def _numeric(frame, path: Path) -> np.ndarray:
    import pandas as pd

    values = frame.apply(pd.to_numeric, errors="coerce")
    missing = frame.apply(lambda c: c.str.strip().str.lower().isin(MISSING_CELLS))
    bad = values.isna() & ~missing  # (missing cells are NaN: _check_finite names them)
    if bad.any().any():
        col = bad.any()[bad.any()].index[0]
        row = int(bad[col].to_numpy().nonzero()[0][0])
        raise DatasetError(f"{path}: feature column {col!r} is not numeric (line {row + 2}: a value of "
                           f"{len(str(frame[col].iloc[row]))} characters that is not a number); give "
                           f"features: the numeric columns, or encode this one as numbers")
    X = values.to_numpy(dtype=np.float64)
    check_finite_values(X, path, list(frame.columns))
    return X


def check_finite_values(X, path, columns: list | None = None) -> None:
    data = X.data if sp.issparse(X) else X
    if np.isfinite(data).all():
        return
    if sp.issparse(X):
        raise DatasetError(f"{path}: the features hold NaN or infinite values; remove or impute them")
    row, col = (int(i[0]) for i in np.nonzero(~np.isfinite(X)))
    name = repr(columns[col]) if columns else str(col)
    line = f"line {row + 2}" if columns else f"row {row}"
    raise DatasetError(f"{path}: feature {name} at {line} is {X[row, col]} ({int((~np.isfinite(X)).sum())} "
                       f"values are NaN, empty or infinite); remove or impute them (a missing label "
                       f"is fine, a missing feature is not)")
