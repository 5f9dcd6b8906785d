"""The one criterion every reproduction page judges its cells by: the noise a difference may show
(:func:`tolerance`), the verdict (:func:`verdict`), the page's statement of both
(:func:`criterion_text`) and how many "outside" verdicts chance alone would give
(:func:`expected_by_chance`)."""

from __future__ import annotations

import math

WITHIN, OUTSIDE = "within noise", "outside noise"
TOO_NOISY, NO_SE = "too noisy to judge", "no SE (one draw)"
# a cell whose SE exceeds this share of its scale (the larger of ours and the paper's value) gets
# no verdict: 2 SE would then span half the value or more, and any difference would pass
NOISE_SHARE = 0.25
# P(|Z| > 2) for a standard normal Z: the share of cells that reproduce the paper exactly and
# still fall outside 2 standard errors of the difference
CHANCE_OUTSIDE = math.erfc(2.0 / math.sqrt(2.0))


def criterion_text() -> str:
    """The verdict's one criterion, as each page states it."""
    return ("Δ = ours − paper. A cell is **within noise** when |Δ| ≤ 2·√(SE² + s²/n), s and n "
            "being the paper's standard deviation and number of draws. Where the paper gives no "
            "spread, our SE stands in for the paper's (its draws as noisy as ours): |Δ| ≤ r + "
            "2·√2·SE, r being half a unit of the paper's last printed digit. SE is the standard "
            "error of our number: of a mean over d draws, std/√d; of the paper's one-draw "
            "statistic (e.g. the lowest-energy draw), the std over our draws. A cell whose SE "
            f"exceeds {100 * NOISE_SHARE:.0f} % of the larger of the two values is **too noisy to judge** "
            "(2 SE spans half of it: any Δ would pass); with one draw there is no SE and no "
            "verdict. At 2σ, chance alone puts about "
            f"{100 * CHANCE_OUTSIDE:.1f} % of cells that reproduce the paper outside noise: each "
            "table says how many that is among its judged honest cells. Every outside-noise cell "
            "names its reason, a key explained in the notes, or says *unexplained*.")


def tolerance(se: float, ref_std: float = math.nan, ref_draws: int | None = None,
              decimals: int = 2) -> float:
    """The largest |Δ| a cell may show and be within noise.

    Parameters
    ----------
    se : float
        Standard error of our number (NaN with a single draw).
    ref_std, ref_draws : float, int or None
        The paper's standard deviation and its number of draws, where it gives them.
    decimals : int
        Decimals the paper prints: its rounding, r = 0.5·10^-decimals, is added where it gives no
        spread.

    Returns
    -------
    float
        2·√(SE² + s²/n) with the paper's spread; else r + 2·√2·SE (our SE standing in for the
        paper's); NaN where SE is NaN.
    """
    if se is None or math.isnan(se):
        return math.nan
    if ref_std is not None and not math.isnan(ref_std) and ref_draws:
        return 2.0 * math.sqrt(se ** 2 + ref_std ** 2 / ref_draws)
    return 0.5 * 10.0 ** -decimals + 2.0 * math.sqrt(2.0) * se


def too_noisy(se: float, ours: float, ref: float) -> bool:
    """Whether SE exceeds :data:`NOISE_SHARE` of the larger of |ours| and |ref|."""
    return not math.isnan(se) and se > NOISE_SHARE * max(abs(ours), abs(ref))


def verdict(delta: float, tol: float, se: float = math.nan, ours: float = math.nan,
            ref: float = math.nan) -> str:
    """``within noise`` when |Δ| ≤ tol (a tiny slack for the floats), else ``outside noise``;
    ``no SE`` where tol is NaN and ``too noisy to judge`` where :func:`too_noisy` (given our
    number ``ours`` and the paper's ``ref``)."""
    if math.isnan(tol):
        return NO_SE
    if not math.isnan(ours) and not math.isnan(ref) and too_noisy(se, ours, ref):
        return TOO_NOISY
    return WITHIN if abs(delta) <= tol + 1e-9 else OUTSIDE


def expected_by_chance(judged: int) -> float:
    """How many of ``judged`` cells fall outside noise by chance alone if every one reproduced
    the paper (:data:`CHANCE_OUTSIDE` of them)."""
    return CHANCE_OUTSIDE * judged
