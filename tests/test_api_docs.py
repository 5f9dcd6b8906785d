"""docs/api.md is generated from the docstrings (docs/gen_api.py) and kept up to date."""
import runpy
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _gen():
    return runpy.run_path(str(REPO / "docs" / "gen_api.py"))


def test_api_page_is_up_to_date():
    text = _gen()["render"]()
    assert (REPO / "docs" / "api.md").read_text() == text, \
        "docs/api.md is out of date: run .venv/bin/python docs/gen_api.py"


def test_api_page_covers_every_solver_and_the_top_level_api():
    import gssl
    from gssl.solvers.registry import SOLVERS

    text = (REPO / "docs" / "api.md").read_text()
    for name, cls in SOLVERS.items():
        assert f"\n### {name}\n\n`{cls.__module__}.{cls.__name__}`" in text
    for name in gssl._LAZY:
        assert f"### `gssl.{name}`" in text


def test_numpydoc_sections_become_markdown():
    render_doc = _gen()["render_doc"]
    doc = """Summary line.

    More text.

    Parameters
    ----------
    k : int, default=10
        Neighbours,
        per node.
    flag
        A switch.

    Notes
    -----
    A note.
    """
    assert render_doc(doc) == ("Summary line.\n\nMore text.\n\n**Parameters**\n\n"
                               "- `k` : int, default=10 -- Neighbours, per node.\n- `flag` -- A switch.\n\n"
                               "**Notes**\n\nA note.")
