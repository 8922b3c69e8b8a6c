"""Kernel of the text operator TfIdfVectorizer."""

from __future__ import annotations

import numpy as np

from ember.dialects.graph.ops_text import NgramPool, ngram_pool

from ._registry import Attrs, Inputs, register


def ngram_counts(rows: np.ndarray, pool: NgramPool) -> np.ndarray:
    """How often each column's n-grams occur in each row of `rows` [B, C]
    (int64 [B, columns]): one match per start and skip distance."""
    rows = rows.astype(np.int64)
    batch, length = rows.shape
    counts = np.zeros((batch, pool.columns), np.int64)
    for gram in pool.grams:
        size = len(gram.tokens)
        for skip in pool.skips(size):
            windows = length - (size - 1) * skip
            if windows <= 0:
                continue
            match = np.ones((batch, windows), bool)
            for j, token in enumerate(gram.tokens):
                match &= rows[:, j * skip : j * skip + windows] == token
            counts[:, gram.column] += match.sum(axis=1)
    return counts


def weighted(counts: np.ndarray, pool: NgramPool) -> np.ndarray:
    """Y from the counts in the pool's mode (float32, as onnxruntime computes it)."""
    weights = np.ones(pool.columns, np.float32) if pool.weights is None else \
        np.array(pool.weights, np.float32)  # fmt: skip
    if pool.mode == "IDF":
        return np.where(counts > 0, weights, np.float32(0)).astype(np.float32)
    y = counts.astype(np.float32)
    return y * weights if pool.mode == "TFIDF" else y


@register("TfIdfVectorizer")
def tfidf_vectorizer(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """Per row of X, the weighted counts of the pool's n-grams; a 1-D X is one row."""
    x = np.asarray(inputs[0])
    pool = ngram_pool(attrs)
    rows = x.reshape(1, -1) if x.ndim == 1 else x
    y = weighted(ngram_counts(rows, pool), pool)
    return [y.reshape(*x.shape[:-1], pool.columns)]
