"""Kernel of the text operator TfIdfVectorizer."""

from __future__ import annotations

import numpy as np

from ember.dialects.graph.ops_text import NgramPool, ngram_pool

from ._registry import Attrs, Inputs, register


def ngram_matches(rows: np.ndarray, tokens: tuple[int, ...], pool: NgramPool) -> np.ndarray:
    """How often the n-gram `tokens` occurs in each row of `rows` [B, C]: one
    match per start and skip distance (int64 [B])."""
    rows = rows.astype(np.int64)
    batch, length = rows.shape
    found = np.zeros(batch, np.int64)
    for skip in pool.skips(len(tokens)):
        windows = length - (len(tokens) - 1) * skip
        if windows <= 0:
            continue
        match = np.ones((batch, windows), bool)
        for j, token in enumerate(tokens):
            match &= rows[:, j * skip : j * skip + windows] == token
        found += match.sum(axis=1)
    return found


@register("TfIdfVectorizer")
def tfidf_vectorizer(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """Per row of X and column, the matches of the column's n-grams (TF), the
    sum of their weights (TFIDF), or the column's weight where one matches
    (IDF); in float32, as onnxruntime computes. A 1-D X is one row."""
    x = np.asarray(inputs[0])
    pool = ngram_pool(attrs)
    rows = x.reshape(1, -1) if x.ndim == 1 else x
    y = np.zeros((rows.shape[0], pool.columns), np.float32)
    for gram in pool.grams:
        found = ngram_matches(rows, gram.tokens, pool).astype(np.float32)
        weight = np.float32(1 if pool.mode == "TF" else gram.weight)
        if pool.mode == "IDF":
            y[:, gram.column] = np.where(found > 0, weight, y[:, gram.column])
        else:
            y[:, gram.column] += found * weight
    return [y.reshape(*x.shape[:-1], pool.columns)]
