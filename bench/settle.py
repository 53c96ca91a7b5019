"""Whether a benchmark's rounds settle a goal on the ratio of two tools' figures.

Each round runs the tools back to back, so its own ratio sees one state of a shared machine. The
median of those ratios gets a distribution-free confidence interval from their order
statistics: [r(k), r(n+1-k)] of the n sorted ratios, with the largest k whose coverage,
1 - 2 P(Binomial(n, 1/2) < k), is at least 90%. With fewer than 5 rounds there is none.

A goal is settled when the whole interval is on one side of it (for a band, inside or outside
it); otherwise the machine's noise is larger than the difference, and more rounds settle it.

    python3 bench/settle.py "a values" "b values" GOAL   # prints: PASS|MISS|UNSETTLED lo hi coverage%
                                                          # (0 0 0: too few rounds)
"""

import sys
from math import comb


def interval(ratios, confidence=0.90):
    """(lo, hi, coverage) for the median of `ratios`, or None when they are too few."""
    r = sorted(ratios)
    n = len(r)
    best = None
    for k in range(1, n // 2 + 1):
        cover = 1 - 2 * sum(comb(n, i) for i in range(k)) / 2**n
        if cover >= confidence:
            best = (r[k - 1], r[n - k], cover)
    return best


def at_least(ratios, goal):
    """PASS, MISS or UNSETTLED for the goal "ratio >= goal", and the interval (or None)."""
    iv = interval(ratios)
    if iv is None:
        return "UNSETTLED", None
    lo, hi, _ = iv
    eps = 1e-12
    return ("PASS" if lo >= goal - eps else "MISS" if hi < goal - eps else "UNSETTLED"), iv


def within(ratios, low, high):
    """PASS when the interval lies inside [low, high], MISS when wholly outside it, else UNSETTLED."""
    iv = interval(ratios)
    if iv is None:
        return "UNSETTLED", None
    lo, hi, _ = iv
    if low <= lo and hi <= high:
        return "PASS", iv
    if hi < low or lo > high:
        return "MISS", iv
    return "UNSETTLED", iv


if __name__ == "__main__":
    a = [float(x) for x in sys.argv[1].split()]
    b = [float(x) for x in sys.argv[2].split()]
    verdict, iv = at_least([x / y for x, y in zip(a, b)], float(sys.argv[3]))
    if iv is None:
        print(f"{verdict} 0 0 0")
    else:
        print(f"{verdict} {iv[0]:.3f} {iv[1]:.3f} {100 * iv[2]:.1f}")
