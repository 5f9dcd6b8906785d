"""Labels as a file gives them: numbers or strings, a missing cell an unlabeled point (-1),
the class names kept in numeric or alphabetical order."""

from __future__ import annotations

import numpy as np

from ..errors import DatasetError

# the cells a table writer puts for a missing value (pandas' and R's spellings, any case): a
# label cell holding one is an unlabeled point, a feature cell a missing value
MISSING_CELLS = frozenset({"", "na", "nan", "-nan", "n/a", "#n/a", "<na>", "null", "none"})


def _is_missing(x) -> bool:
    if x is None:
        return True
    if isinstance(x, str):
        return x.strip().lower() in MISSING_CELLS
    return isinstance(x, (float, np.floating)) and bool(np.isnan(x))


# from this many labelled rows, a label column with a distinct value on every row is refused
CONTINUOUS_MIN_ROWS = 20


def encode_labels(values, where: str) -> tuple[np.ndarray, np.ndarray]:
    """(y, classes): y in 0..C-1 (-1 where a value is missing: None, NaN, an empty string or a
    missing-value word such as ``NA`` or ``nan``, see MISSING_CELLS) and the C class names as
    strings (numbers in numeric order, e.g. "2" before "10"). -1 is a class like any other: binary
    labels are often -1 / 1."""
    v = np.asarray(values, dtype=object).ravel()
    missing = np.array([_is_missing(x) for x in v], dtype=bool)
    present = v[~missing]
    numeric = [_as_number(x) for x in present]
    if all(n is not None for n in numeric):
        keys = np.asarray(numeric, dtype=np.float64)
        uniq = np.unique(keys)
        names = np.asarray([_number_name(u) for u in uniq])
        codes = np.searchsorted(uniq, keys)
    else:
        text = np.asarray([str(x).strip() for x in present])
        names, codes = np.unique(text, return_inverse=True)
    y = np.full(v.size, -1, dtype=np.int64)
    y[~missing] = codes
    if names.size == present.size >= CONTINUOUS_MIN_ROWS:
        raise DatasetError(f"{where}: every one of the {present.size} labelled rows has its own "
                           f"label ({', '.join(names[:5])}, ...): the column looks continuous (a "
                           f"regression target or an id?), and a classification benchmark needs "
                           f"classes: is label: the right column? (bin it into classes first)")
    if names.size < 2:
        raise DatasetError(f"{where}: the labels hold {names.size} class"
                           f"{'' if names.size == 1 else 'es'} ({', '.join(names) or 'none'}); a "
                           f"classification benchmark needs at least 2: is label: the right column?")
    return y, names.astype(str)


def _as_number(x):
    if isinstance(x, (bool, np.bool_)):
        return None
    if isinstance(x, (int, float, np.integer, np.floating)):
        return float(x)
    try:
        return float(str(x).strip())
    except ValueError:
        return None


def _number_name(u: float) -> str:
    return str(int(u)) if float(u).is_integer() else repr(float(u))
