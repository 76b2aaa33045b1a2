"""Published reliability data sets used by the agreement tests."""

from __future__ import annotations

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers
# (columns) by 12 units (rows), values 1-5, None where an observer did not code the unit.
# Gwet's irrCAC ships the same data as `raw_4raters` (unit 12's lone value under rater 3).
KRIPPENDORFF_2011: list[list[int | None]] = [
    [1, 1, None, 1],
    [2, 2, 3, 2],
    [3, 3, 3, 3],
    [3, 3, 3, 3],
    [2, 2, 2, 2],
    [1, 2, 3, 4],
    [4, 4, 4, 4],
    [1, 1, 2, 1],
    [2, 2, 2, 2],
    [None, 5, 5, 5],
    [None, None, 1, 1],
    [None, None, 3, None],
]

# Fleiss (1971), Table 1, as raw ratings: 30 patients (rows) by 6 psychiatrists, diagnoses
# 1 depression, 2 personality disorder, 3 schizophrenia, 4 neurosis, 5 other. Copied from
# statsmodels' test data (statsmodels/stats/tests/test_inter_rater.py, `diagnoses`), which
# reproduces R irr's `kappam.fleiss(diagnoses)` = 0.4302445.
FLEISS_1971: list[list[int]] = [
    [4, 4, 4, 4, 4, 4],
    [2, 2, 2, 5, 5, 5],
    [2, 3, 3, 3, 3, 5],
    [5, 5, 5, 5, 5, 5],
    [2, 2, 2, 4, 4, 4],
    [1, 1, 3, 3, 3, 3],
    [3, 3, 3, 3, 5, 5],
    [1, 1, 3, 3, 3, 4],
    [1, 1, 4, 4, 4, 4],
    [5, 5, 5, 5, 5, 5],
    [1, 4, 4, 4, 4, 4],
    [1, 2, 4, 4, 4, 4],
    [2, 2, 2, 3, 3, 3],
    [1, 4, 4, 4, 4, 4],
    [2, 2, 4, 4, 4, 5],
    [3, 3, 3, 3, 3, 5],
    [1, 1, 1, 4, 5, 5],
    [1, 1, 1, 1, 1, 2],
    [2, 2, 4, 4, 4, 4],
    [1, 3, 3, 5, 5, 5],
    [5, 5, 5, 5, 5, 5],
    [2, 4, 4, 4, 4, 4],
    [2, 2, 4, 5, 5, 5],
    [1, 1, 4, 4, 4, 4],
    [1, 4, 4, 4, 4, 5],
    [2, 2, 2, 2, 2, 4],
    [1, 1, 1, 1, 5, 5],
    [2, 2, 4, 4, 4, 4],
    [1, 3, 3, 3, 3, 3],
    [5, 5, 5, 5, 5, 5],
]
