"""Loss kernels: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss."""

from __future__ import annotations

import numpy as np

from ._registry import Attrs, Inputs, arg, register


def nll(x: np.ndarray, target: np.ndarray, weight: np.ndarray | None, attrs: Attrs) -> np.ndarray:
    """-x[n, target[n, d], d] * weight[target[n, d]], reduced; an element whose
    target is ignore_index counts nothing (a mean divides by the weight of the
    elements counted)."""
    ignore = attrs.get("ignore_index")
    counted = np.ones(target.shape, bool) if ignore is None else target != ignore
    safe = np.where(counted, target, 0).astype(np.int64)
    picked = np.take_along_axis(x.astype(np.float64), safe[:, None], axis=1)[:, 0]
    w = np.ones(target.shape) if weight is None else weight.astype(np.float64)[safe]
    w = np.where(counted, w, 0.0)
    losses = -picked * w
    reduction = attrs.get("reduction", "mean")
    if reduction == "sum":
        losses = np.asarray(losses.sum())
    elif reduction == "mean":
        with np.errstate(all="ignore"):
            losses = np.asarray(losses.sum() / w.sum())
    return losses.astype(x.dtype)


@register("NegativeLogLikelihoodLoss")
def negative_log_likelihood_loss(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    return [nll(np.asarray(inputs[0]), np.asarray(inputs[1]), arg(inputs, 2), attrs)]


@register("SoftmaxCrossEntropyLoss")
def softmax_cross_entropy_loss(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """The loss, then log_prob (LogSoftmax of the scores over the class axis)
    when the node has that output (``__num_results__``)."""
    scores = np.asarray(inputs[0])
    wide = scores.astype(np.float64)
    shifted = wide - wide.max(axis=1, keepdims=True)
    log_prob = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    loss = nll(log_prob, np.asarray(inputs[1]), arg(inputs, 2), attrs).astype(scores.dtype)
    return [loss, log_prob.astype(scores.dtype)][: attrs.get("__num_results__", 2)]
