"""Graph-to-tensor lowering of the text operator TfIdfVectorizer.

The n-gram pool is constant, so the counting is a fixed set of generics on
static shapes (a 1-D X is one row). Per n-gram length n:

- one generic per skip distance d (a unigram at d = 1 only) adds to i32
  counts [B, columns, entries] the matches of the windows
  `X[b, s], X[b, s + d], ..., X[b, s + (n - 1) d]`: its dims are (b,
  column, entry, s), `entry` running over the n-grams of length n that
  share a column (usually one) and `s`, the one reduction, over the starts
  whose window fits the row. The window's j-th token is read from the slice
  `X[:, j d : j d + starts]` at (b, s), so every read is a plain dim and
  the slices give s its extent; the pool is a constant [columns, entries,
  n] table in X's type, read at (column, entry, j). Integer counts keep the
  long reduction over s exact, so it vectorizes;
- one generic adds each count times its n-gram's score (its weight in mode
  TFIDF, else 1; 0 for the padding of columns with fewer n-grams of that
  length) into Y, f32, filled with 0 first, reducing over `entry`. (The
  product is rounded once; onnxruntime adds the weight once per match, so
  the last bit of a TFIDF value may differ.)

Only the columns from the first to the last one that has an n-gram of
length n take part (an extract_slice of Y, inserted back after): pools list
each length's n-grams in a run of columns. An n-gram with a token outside
X's type (an int32 X, an int64 pool) never matches and is left out. Modes
TF and TFIDF are then done; IDF's counts go through one all-parallel
generic giving the column's weight where the count is positive, else 0.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from xdsl.dialects.builtin import f32, i32
from xdsl.ir import Attribute, SSAValue

from ember.dialects.graph import GraphOp, TfIdfVectorizerOp
from ember.dialects.graph.ops_text import Ngram, NgramPool, ngram_pool
from ember.dialects.graph.types import numpy_dtype
from ember.lowering.graph_to_tensor.common import (
    PARALLEL,
    REDUCTION,
    Body,
    Emitter,
    FamilyPattern,
    _dim,
    _elem,
    _identity,
    _map,
    _shape,
)


def _tables(pool: NgramPool, t: Attribute) -> dict[int, tuple[int, np.ndarray, np.ndarray]]:
    """Per n-gram length: the first column with an n-gram of that length, the
    [columns, entries, length] token table (columns from that first one to
    the last) and the [columns, entries] f32 table of scores."""
    by_length: dict[int, dict[int, list[Ngram]]] = defaultdict(lambda: defaultdict(list))
    dtype = numpy_dtype(t)
    low, high = np.iinfo(dtype).min, np.iinfo(dtype).max
    for gram in pool.grams:
        if all(low <= token <= high for token in gram.tokens):
            by_length[len(gram.tokens)][gram.column].append(gram)
    tables = {}
    for length, columns in sorted(by_length.items()):
        first, last = min(columns), max(columns)
        entries = max(len(grams) for grams in columns.values())
        tokens = np.zeros((last - first + 1, entries, length), dtype)
        scores = np.zeros((last - first + 1, entries), np.float32)
        for column, grams in columns.items():
            tokens[column - first, : len(grams)] = [gram.tokens for gram in grams]
            scores[column - first, : len(grams)] = [
                gram.weight if pool.mode == "TFIDF" else 1 for gram in grams
            ]
        tables[length] = (first, tokens, scores)
    return tables


def _count_match(b: Body, args: list[SSAValue]) -> list[SSAValue]:
    """(window tokens..., pool tokens..., count) -> count + 1 where they all match."""
    length = (len(args) - 1) // 2
    match = b.cmp("eq", args[0], args[length])
    for j in range(1, length):
        match = b.and_(match, b.cmp("eq", args[j], args[length + j]))
    return [b.add(args[-1], b.convert(match, i32))]


def _add_score(b: Body, args: list[SSAValue]) -> list[SSAValue]:
    """(count, score, sum) -> sum + count * score."""
    return [b.add(args[2], b.mul(b.convert(args[0], f32), args[1]))]


def _count(e: Emitter, rows: SSAValue, table: np.ndarray, skips: range) -> SSAValue | None:
    """The i32 [B, columns, entries] matches of the n-grams of `table` (their
    [columns, entries, length] tokens) over the skip distances `skips`; None
    when no window fits a row."""
    batch, row_length = _shape(rows)
    columns, entries, length = table.shape
    tokens, counts = e.constant(table), None
    for skip in skips:
        starts = row_length - (length - 1) * skip  # type: ignore[operator]
        if starts <= 0:
            continue
        windows = [e.extract(rows, [0, j * skip], [batch, starts]) for j in range(length)]
        maps = ([_map(4, [_dim(0), _dim(3)])] * length
                + [_map(4, [_dim(1), _dim(2), j]) for j in range(length)]
                + [_map(4, [_dim(0), _dim(1), _dim(2)])])  # fmt: skip
        if counts is None:
            counts = e.fill(0, [batch, columns, entries], i32)
        counts = e.generic([*windows, *[tokens] * length], [counts], maps,
                           [PARALLEL, PARALLEL, PARALLEL, REDUCTION], _count_match)[0]  # fmt: skip
    return counts


def _add_scores(e: Emitter, rows: SSAValue, y: SSAValue, pool: NgramPool) -> SSAValue:
    """`y` plus the scores of the matches of every n-gram length and skip distance."""
    batch = _shape(rows)[0]
    for length, (first, tokens, scores) in _tables(pool, _elem(rows)).items():
        counts = _count(e, rows, tokens, pool.skips(length))
        if counts is None:
            continue
        part = e.extract(y, [0, first], [batch, scores.shape[0]])
        maps = [_identity(3), _map(3, [_dim(1), _dim(2)]), _map(3, [_dim(0), _dim(1)])]
        part = e.generic([counts, e.constant(scores)], [part], maps,
                         [PARALLEL, PARALLEL, REDUCTION], _add_score)[0]  # fmt: skip
        y = e.insert(part, y, [0, first])
    return y


def _lower_tfidf_vectorizer(e: Emitter, op: GraphOp) -> list[SSAValue]:
    x = op.operands[0]
    pool = ngram_pool(op.attribute_values())
    rows = e.reshape(x, [1, *_shape(x)]) if len(_shape(x)) == 1 else x
    shape = [_shape(rows)[0], pool.columns]
    y = _add_scores(e, rows, e.fill(0, shape, f32), pool)
    if pool.mode == "IDF":
        weights = e.constant(np.array(pool.column_weights(), np.float32))

        def weigh(b: Body, args: list[SSAValue]) -> SSAValue:
            found = b.cmpf("ogt", args[0], b.const(0, f32))
            return b.select(found, args[1], b.const(0, f32))

        y = e.parallel([y, weights], shape, f32, weigh, [_identity(2), _map(2, [_dim(1)])])
    return [e.reshape(y, _shape(op.results[0]))]


class TextPattern(FamilyPattern):
    """TfIdfVectorizer (per n-gram length, one counting generic per skip
    distance and one scoring generic; for IDF one weighing generic)."""

    lowerings = {TfIdfVectorizerOp: _lower_tfidf_vectorizer}
