"""The machine-readable part of a page's hand-written notes (``<paper>.notes.md``): its reasons.

Under a ``## Reasons`` heading, each item ``- **key**: text`` (the text may go on over indented
lines) explains why some cells differ from the paper; a reference's ``reasons:`` in the config
gives cells these keys (:func:`gssl.analysis.reproduction.cells.reason_for`)."""

from __future__ import annotations

import re
from pathlib import Path

from ...errors import ConfigError

HEADING = "## Reasons"
_ITEM = re.compile(r"^- \*\*([A-Za-z0-9_.-]+)\*\*:?\s*(.*)$")


def read_reasons(path) -> dict[str, str]:
    """key -> text of the reasons in the notes at ``path`` (none when the file or the section is
    not there), in their order."""
    path = Path(path) if path else None
    if path is None or not path.exists():
        return {}
    out: dict[str, str] = {}
    inside, key = False, None
    for line in path.read_text().splitlines():
        if line.startswith("## "):
            inside, key = line.strip() == HEADING, None
            continue
        if not inside:
            continue
        m = _ITEM.match(line)
        if m:
            key = m.group(1)
            out[key] = m.group(2).strip()
        elif key and line.startswith("  ") and line.strip():
            out[key] += " " + line.strip()
        elif not line.strip():
            key = None
    return out


def check_reasons(used: set, reasons: dict, notes_path, config_path) -> None:
    """Raise :class:`ConfigError` when a reason key the config gives a cell has no text in the notes."""
    missing = sorted(k for k in used if k and k not in reasons)
    if missing:
        raise ConfigError(
            f"{config_path}: reasons: names {', '.join(repr(k) for k in missing)}, which "
            f"{Path(notes_path).as_posix()}{'' if Path(notes_path).exists() else ' (not there yet)'} "
            f"does not explain; add '- **{missing[0]}**: <why these cells differ>' under "
            f"'{HEADING}' there")
