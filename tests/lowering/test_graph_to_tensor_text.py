"""TfIdfVectorizer through the reference interpreter and compiled for the CPU,
next to onnxruntime: every mode with and without weights, unigrams to
trigrams with skips, 1-D and batched int32 and int64 token ids, n-grams
sharing a column, a pool token beyond int32, rows shorter than an n-gram;
and the attributes Ember refuses, each with a one-line error naming the
node."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from xdsl.context import Context

import ember
from ember import reference
from ember.errors import EmberError
from ember.lowering.graph_to_tensor import ConvertGraphToTensorPass
from tests.support.models import run_onnxruntime

VOCAB = 5
"""Token ids are drawn from 0..VOCAB-1, so that n-grams of the pool recur."""


def _pool(rng: np.random.Generator, sizes: tuple[int, ...]) -> tuple[list[int], list[int]]:
    """`ngram_counts` and `pool_int64s` for `sizes[k]` distinct (k+1)-grams."""
    counts, pool = [], []
    for length, number in enumerate(sizes, start=1):
        counts.append(len(pool))
        grams: set[tuple[int, ...]] = set()
        while len(grams) < number:
            grams.add(tuple(int(v) for v in rng.integers(0, VOCAB, length)))
        pool += [token for gram in sorted(grams) for token in gram]
    return counts, pool


def _attrs(seed: int, sizes: tuple[int, ...], lengths: tuple[int, int], skip: int, mode: str,
           weights: bool, columns: str = "permuted") -> dict[str, Any]:  # fmt: skip
    rng = np.random.default_rng(seed)
    counts, pool = _pool(rng, sizes)
    grams = sum(sizes)
    indexes = {"permuted": rng.permutation(grams),
               "shared": rng.integers(0, max(grams // 2, 1), grams)}[columns]  # fmt: skip
    attrs: dict[str, Any] = {
        "mode": mode, "min_gram_length": lengths[0], "max_gram_length": lengths[1],
        "max_skip_count": skip, "ngram_counts": counts,
        "ngram_indexes": [int(i) for i in indexes], "pool_int64s": pool,
    }  # fmt: skip
    if weights:
        attrs["weights"] = [float(w) for w in rng.uniform(0.5, 2.0, grams).astype(np.float32)]
    return attrs


def _model(x: np.ndarray, attrs: dict[str, Any]) -> onnx.ModelProto:
    node = helper.make_node("TfIdfVectorizer", ["X"], ["Y"], name="vectorize", **attrs)
    graph = helper.make_graph(
        [node], "tfidf",
        [helper.make_tensor_value_info("X", helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


def _check(x: np.ndarray, attrs: dict[str, Any]) -> None:
    model = _model(x, attrs)
    expected = run_onnxruntime(model, {"X": x})[0]
    interpreted = reference.run(ember.import_onnx(model), {"X": x})[0]
    compiled = ember.compile(model, threads=1).run({"X": x})[0]
    for got in (interpreted, compiled):
        assert got.dtype == np.float32 and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=0)


def _tokens(*shape: int, dtype: Any = np.int32) -> np.ndarray:
    return np.random.default_rng(sum(shape)).integers(0, VOCAB, shape).astype(dtype)


@pytest.mark.parametrize("mode", ["TF", "IDF", "TFIDF"])
@pytest.mark.parametrize("weights", [False, True], ids=["unweighted", "weighted"])
def test_modes(mode: str, weights: bool) -> None:
    """Uni-, bi- and trigrams with up to two skips, in 3 rows of 11 tokens."""
    _check(_tokens(3, 11), _attrs(1, (3, 6, 4), (1, 3), 2, mode, weights))


@pytest.mark.parametrize(("sizes", "lengths", "skip"), [
    ((4, 5), (2, 2), 0),  # bigrams only, the unigrams of the pool left out
    ((4, 5), (1, 1), 3),  # unigrams only: counted once, whatever the skips
    ((0, 6, 3), (2, 3), 4),  # no unigrams in the pool; a window longer than the row
], ids=["bigrams", "unigrams", "long-skips"])  # fmt: skip
def test_lengths_and_skips(sizes: tuple[int, ...], lengths: tuple[int, int], skip: int) -> None:
    _check(_tokens(9, dtype=np.int64), _attrs(2, sizes, lengths, skip, "TF", False))


def test_ngrams_sharing_columns() -> None:
    """Several n-grams may count into one column (their counts add up)."""
    _check(_tokens(2, 8), _attrs(3, (3, 6), (1, 2), 1, "TFIDF", True, columns="shared"))


def test_a_token_beyond_int32_never_matches_an_int32_row() -> None:
    attrs = _attrs(4, (3, 4), (1, 2), 1, "TF", False)
    attrs["pool_int64s"][0] = 2**32 + 1  # 1 as an int32
    _check(np.array([[1, 1, 2, 3, 1]], np.int32), attrs)


def test_short_rows() -> None:
    """Rows of one token hold no bigram, at any skip."""
    _check(_tokens(4, 1), _attrs(5, (2, 3), (1, 2), 2, "IDF", True))


def test_the_lowering_counts_each_length_and_skip_in_one_generic() -> None:
    """Unigrams once, bigrams and trigrams at each of 3 skip distances, one
    generic per length adding the scores (and for IDF one weighing generic)."""
    for mode, weighing in (("TF", 0), ("IDF", 1)):
        attrs = _attrs(1, (3, 6, 4), (1, 3), 2, mode, False)
        module = ember.import_onnx(_model(_tokens(11), attrs))
        ConvertGraphToTensorPass().apply(Context(), module)
        generics = sum(op.name == "linalg.generic" for op in module.walk())
        assert generics == (1 + 3 + 3) + 3 + weighing


@pytest.mark.parametrize(("change", "message"), [
    ({"pool_strings": ["a", "b"], "pool_int64s": None},
     "pool_strings is not supported: Ember counts integer tokens (pool_int64s)"),
    ({"pool_int64s": [1, 2, 1, 3, 1, 3]}, "pool_int64s repeats the 2-gram [1, 3]"),
    ({"mode": "BM25"}, "mode must be TF, IDF or TFIDF, got 'BM25'"),
    ({"max_gram_length": 3}, "max_gram_length (3) exceeds the 2 sizes ngram_counts gives"),
    ({"weights": [1.0, 2.0]}, "weights has 2 entries, ngram_indexes 4"),
    ({"ngram_counts": [0, 3], "pool_int64s": [1, 2, 3, 4, 5, 6]},
     "the 3 items of 2-grams are not whole 2-grams"),
    ({"mode": "IDF", "ngram_indexes": [0, 1, 2, 2], "weights": [1.0, 1.0, 2.0, 3.0]},
     "mode IDF: the n-grams of column 2 have different weights"),
], ids=["strings", "repeated", "mode", "lengths", "weights", "counts", "idf-weights"])  # fmt: skip
def test_refused_attributes_name_the_node(change: dict[str, Any], message: str) -> None:
    attrs = {"mode": "TF", "min_gram_length": 1, "max_gram_length": 2, "max_skip_count": 0,
             "ngram_counts": [0, 2], "ngram_indexes": [0, 1, 2, 3],
             "pool_int64s": [1, 2, 1, 3, 4, 5]}  # fmt: skip
    attrs = {k: v for k, v in (attrs | change).items() if v is not None}
    with pytest.raises(EmberError) as error:
        ember.import_onnx(_model(_tokens(6), attrs))
    text = str(error.value)
    assert "vectorize" in text and message in text and "\n" not in text


def test_string_tokens_name_the_node() -> None:
    """String tokens (a string X, pool_strings) are refused at the input,
    naming the node that reads it."""
    node = helper.make_node("TfIdfVectorizer", ["X"], ["Y"], name="vectorize", mode="TF",
                            min_gram_length=1, max_gram_length=1, max_skip_count=0,
                            ngram_counts=[0], ngram_indexes=[0, 1], pool_strings=["a", "b"])  # fmt: skip
    graph = helper.make_graph([node], "tfidf",
                              [helper.make_tensor_value_info("X", TensorProto.STRING, [4])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    with pytest.raises(EmberError) as error:
        ember.compile(model)
    assert str(error.value) == ("tfidf: input 'X': unsupported ONNX element type STRING "
                                "(read by node 'vectorize' (TfIdfVectorizer))")  # fmt: skip
