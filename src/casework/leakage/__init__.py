"""Leakage: near-duplicates across splits, rows copied into prompts, rows inside training corpora.

Entry points: :func:`shingle_sets`, :func:`exact_join`, :func:`lsh_join`, :func:`choose_params`.
"""
