"""Text operators of ONNX's default domain: `graph.tf_idf_vectorizer`.

- TfIdfVectorizer (opset 9) counts, in each row of X ([C] or [B, C], int32
  or int64 token ids), the n-grams of a constant pool: an n-gram of length
  n matches the window `X[s], X[s + d], ..., X[s + (n - 1) d]` for every
  start s and skip distance d from 1 to max_skip_count + 1 (unigrams once,
  at d = 1), for lengths min_gram_length to max_gram_length. The pool
  (`pool_int64s`) holds the 1-grams, then the 2-grams, ..., each size
  starting at its entry of `ngram_counts`; the i-th n-gram of the pool
  counts into column `ngram_indexes[i]` of Y (float32, [C'] or [B, C'] with
  C' = max(ngram_indexes) + 1) with weight `weights[i]` (1 without
  weights), as onnxruntime reads them. Mode TF gives the number of matches
  per column, TFIDF the sum of the weights of the matches, and IDF the
  weight of the column's n-grams where some match, else 0 (n-grams sharing
  a column must then have one weight). `ngram_pool` reads the attributes
  into the n-grams it counts, and checks them as onnxruntime does (a pool
  that repeats an n-gram is refused). Ember counts integer tokens only:
  `pool_strings` is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import IntegerType, TensorType, f32, i64

from ember.dialects.graph.base import GraphOp, graph_op
from ember.dialects.graph.shapes import ShapeContext, ShapeError, result
from ember.dialects.graph.spec import (
    OpSpec,
    floats_attr,
    int_attr,
    ints_attr,
    one,
    string_attr,
    strings_attr,
)

MODES = ("TF", "IDF", "TFIDF")
"""TfIdfVectorizer's weighting modes."""


@dataclass(frozen=True)
class Ngram:
    """One n-gram of the pool: its token ids, the column of Y it counts into
    and its weight."""

    tokens: tuple[int, ...]
    column: int
    weight: float = 1.0


@dataclass(frozen=True)
class NgramPool:
    """The n-grams a TfIdfVectorizer counts (those of min_gram_length to
    max_gram_length) and how the counts become Y."""

    grams: tuple[Ngram, ...]
    columns: int
    """Y's last dim: max(ngram_indexes) + 1."""
    max_skip_count: int
    mode: str

    def skips(self, length: int) -> range:
        """The skip distances (1 is adjacent tokens) at which an n-gram of
        `length` tokens is counted: a unigram once."""
        return range(1, 2 if length == 1 else self.max_skip_count + 2)

    def column_weights(self) -> list[float]:
        """The weight of each column's n-grams (IDF's value where one matches)."""
        weights = [1.0] * self.columns
        for gram in self.grams:
            weights[gram.column] = gram.weight
        return weights


def _ints(value: Any) -> list[int]:
    return [] if value is None else [int(v) for v in value]


def _check_lengths(attrs: Mapping[str, Any]) -> tuple[int, int, int]:
    """(min_gram_length, max_gram_length, max_skip_count), checked."""
    low, high = int(attrs["min_gram_length"]), int(attrs["max_gram_length"])
    skip = int(attrs["max_skip_count"])
    if low < 1:
        raise ShapeError(f"min_gram_length must be positive, got {low}")
    if high < low:
        raise ShapeError(f"max_gram_length ({high}) must be at least min_gram_length ({low})")
    if skip < 0:
        raise ShapeError(f"max_skip_count must be non-negative, got {skip}")
    return low, high, skip


def _weights(attrs: Mapping[str, Any], indexes: list[int]) -> list[float]:
    weights = attrs.get("weights")
    if not weights:
        return [1.0] * len(indexes)
    if len(weights) != len(indexes):
        raise ShapeError(f"weights has {len(weights)} entries, ngram_indexes {len(indexes)}")
    return [float(w) for w in weights]


def _check_idf_weights(grams: list[Ngram]) -> None:
    """IDF gives a column the weight of its n-grams: they must agree."""
    weights: dict[int, float] = {}
    for gram in grams:
        if weights.setdefault(gram.column, gram.weight) != gram.weight:
            raise ShapeError(f"mode IDF: the n-grams of column {gram.column} have different "
                             "weights")  # fmt: skip


def ngram_pool(attrs: Mapping[str, Any]) -> NgramPool:
    """The n-grams TfIdfVectorizer's attributes describe (`attrs` with
    defaults applied); a ShapeError names the first attribute that breaks
    a rule."""
    if attrs.get("pool_strings"):
        raise ShapeError("pool_strings is not supported: Ember counts integer tokens (pool_int64s)")
    mode = attrs["mode"]
    if mode not in MODES:
        raise ShapeError(f"mode must be TF, IDF or TFIDF, got {mode!r}")
    low, high, skip = _check_lengths(attrs)
    counts, indexes = _ints(attrs.get("ngram_counts")), _ints(attrs.get("ngram_indexes"))
    pool = _ints(attrs.get("pool_int64s"))
    if not counts or not indexes or not pool:
        raise ShapeError("ngram_counts, ngram_indexes and pool_int64s must not be empty")
    if high > len(counts):
        raise ShapeError(
            f"max_gram_length ({high}) exceeds the {len(counts)} sizes ngram_counts gives"
        )
    if min(indexes) < 0:
        raise ShapeError("ngram_indexes must be non-negative")
    weights = _weights(attrs, indexes)
    grams: list[Ngram] = []
    seen: set[tuple[int, ...]] = set()
    first_id = 0  # the pool position of the first n-gram of each size
    for size, (start, end) in enumerate(zip(counts, [*counts[1:], len(pool)]), start=1):
        if not 0 <= start <= end <= len(pool):
            raise ShapeError(f"ngram_counts puts the {size}-grams at [{start}, {end}), "
                             f"outside pool_int64s ({len(pool)} items)")  # fmt: skip
        if (end - start) % size:
            raise ShapeError(f"the {end - start} items of {size}-grams are not whole {size}-grams")
        number = (end - start) // size
        if low <= size <= high:
            if first_id + number > len(indexes):
                raise ShapeError(f"ngram_indexes has {len(indexes)} entries, fewer than the "
                                 "pool's n-grams")  # fmt: skip
            for k in range(number):
                tokens = tuple(pool[start + k * size : start + (k + 1) * size])
                if tokens in seen:
                    raise ShapeError(f"pool_int64s repeats the {size}-gram {list(tokens)}")
                seen.add(tokens)
                grams.append(Ngram(tokens, indexes[first_id + k], weights[first_id + k]))
        first_id += number
    if mode == "IDF":
        _check_idf_weights(grams)
    return NgramPool(tuple(grams), max(indexes) + 1, skip, mode)


def tfidf_vectorizer(ctx: ShapeContext) -> list[TensorType]:
    x = ctx.element_type("X")
    if x not in (IntegerType(32), i64):
        raise ShapeError(f"X must be an int32 or int64 tensor, got {ctx.type('X')}")
    shape = ctx.shape("X")
    if len(shape) not in (1, 2):
        raise ShapeError(f"X must be 1-D [C] or 2-D [B, C], got {ctx.type('X')}")
    pool = ngram_pool({a.name: ctx.attr(a.name) for a in ctx.spec.attributes})
    return result(f32, [*shape[:-1], pool.columns])


SPECS: list[OpSpec] = [
    OpSpec("TfIdfVectorizer", [one("X")], [one("Y")], tfidf_vectorizer,
           attributes=(int_attr("max_gram_length", required=True),
                       int_attr("max_skip_count", required=True),
                       int_attr("min_gram_length", required=True),
                       string_attr("mode", required=True),
                       ints_attr("ngram_counts", required=True),
                       ints_attr("ngram_indexes", required=True), ints_attr("pool_int64s"),
                       strings_attr("pool_strings"), floats_attr("weights")),
           summary="Counts the pool's n-grams (with skips) in each row of token ids, "
                   "weighted TF, IDF or TFIDF."),
]  # fmt: skip


@graph_op(SPECS)
class TfIdfVectorizerOp(GraphOp): ...
