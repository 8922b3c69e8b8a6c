"""A learned cost model: ranks a task's candidate schedules before any is measured.

Each (op, schedule) becomes a vector of features that say what the loops
will do, whatever the dims are numbered: the op's work and shape (log2 of
its flops, dims, reduction dims, whether it is a contraction), the
schedule's knobs (micro-kernel rows, vectors and accumulators, unroll,
vector width, packed operands, tiled dims and the tiles that leave a
remainder), the innermost loop (its extent, whether it reduces, whether
it walks the output contiguously), and per operand (inputs and the output,
up to `OPERANDS`) how the innermost loop walks it (contiguously, not at
all, or strided) and the bytes one innermost tile of it covers (log2, and
over the CPU's L1 and L2 sizes).

The model is a gradient-boosted regressor (LightGBM) fitted to
log(seconds / the default schedule's seconds) of every measurement so far,
over all tasks, and refitted as measurements arrive
(`CostModel.update`); `rank` orders candidates by the predicted time.
Until it has `MIN_SAMPLES` measurements it ranks at random (exploration),
as Ansor does before its model has data.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.ir.affine import AffineDimExpr

from ember.dialects.schedule import PARALLEL, IterationSpace, ScheduleAttr, map_depends_on
from ember.errors import EmberError
from ember.targets.cpu.schedule.cpu_target import CpuTarget

OPERANDS = 4
"""Operands described per op (the inputs first, then the output)."""
MIN_SAMPLES = 12
"""Measurements before the model is fitted."""
ELEMENT_BYTES = 4
BOOST_ROUNDS = 80


def features(space: IterationSpace, schedule: ScheduleAttr, target: CpuTarget) -> list[float]:
    """The feature vector of `schedule` on an op of iteration space `space`."""
    extents = space.extents
    tiles = schedule.tile_sizes
    order = schedule.loop_order
    micro = schedule.micro_kernel
    work = math.prod(extents)
    innermost = order[-1] if order else 0
    block = [t if 0 < t < e else e for t, e in zip(tiles, extents, strict=True)]
    if micro is not None:
        block[micro.m], block[micro.n] = micro.rows, micro.columns
        innermost = micro.n
    output = space.output_maps[0].results if space.output_maps else ()
    contiguous_output = bool(output) and output[-1] == AffineDimExpr(innermost)
    values = [
        math.log2(max(work, 1)), len(extents),
        sum(kind != PARALLEL for kind in space.iterators), float(space.product is not None),
        float(micro is not None), micro.rows if micro else 0, micro.vectors if micro else 0,
        micro.rows * micro.vectors if micro else 0, schedule.unroll_factor,
        schedule.vector_width, len(schedule.packed_operands),
        sum(0 < t < e for t, e in zip(tiles, extents, strict=True)),
        sum(0 < t < e and e % t != 0 for t, e in zip(tiles, extents, strict=True)),
        math.log2(max(extents[innermost], 1)), float(space.iterators[innermost] != PARALLEL),
        float(contiguous_output),
    ]  # fmt: skip
    maps = [*space.maps[: space.inputs][: OPERANDS - 1], *space.output_maps[:1]]
    for number in range(OPERANDS):
        if number >= len(maps):
            values += [0.0, 0.0, 0.0, 0.0, 0.0]
            continue
        amap = maps[number]
        walks = map_depends_on(amap, innermost)
        last = amap.results[-1] if amap.results else None
        unit = walks and last == AffineDimExpr(innermost)
        covered = math.prod(b for d, b in enumerate(block) if map_depends_on(amap, d))
        footprint = covered * ELEMENT_BYTES
        values += [float(unit), float(not walks), math.log2(max(footprint, 1)),
                   footprint / target.l1_bytes, footprint / target.l2_bytes]  # fmt: skip
    return values


class CostModel:
    """The regressor and its training data (see the module docstring)."""

    def __init__(self, seed: int = 0):
        self.rows: list[list[float]] = []
        self.targets: list[float] = []
        self.seed = seed
        self._model: object | None = None
        self._fitted_on = 0

    def add(self, row: Sequence[float], seconds: float, default_seconds: float) -> None:
        """One measurement: its features and its time against the default's."""
        self.rows.append(list(row))
        self.targets.append(math.log(seconds / default_seconds))

    def update(self) -> None:
        """Refits the model where measurements came since the last fit."""
        if len(self.rows) < MIN_SAMPLES or len(self.rows) == self._fitted_on:
            return
        lightgbm: Any = _lightgbm()
        params = {"objective": "regression", "learning_rate": 0.1, "num_leaves": 15,
                  "min_data_in_leaf": 3, "min_data_in_bin": 1, "seed": self.seed,
                  "deterministic": True, "num_threads": 1, "verbose": -1}  # fmt: skip
        data = lightgbm.Dataset(np.asarray(self.rows), np.asarray(self.targets), params=params)
        self._model = lightgbm.train(params, data, num_boost_round=BOOST_ROUNDS)
        self._fitted_on = len(self.rows)

    @property
    def fitted(self) -> bool:
        return self._model is not None

    def predict(self, rows: Sequence[Sequence[float]]) -> list[float]:
        """Predicted log(seconds / default seconds) of each row."""
        if self._model is None or not rows:
            return [0.0] * len(rows)
        return [float(v) for v in self._model.predict(np.asarray(rows))]  # type: ignore[attr-defined]

    def rank(self, rows: Sequence[Sequence[float]], rng: random.Random) -> list[int]:
        """The indices of `rows`, predicted fastest first (random order
        before the model is fitted)."""
        indices = list(range(len(rows)))
        if self._model is None:
            rng.shuffle(indices)
            return indices
        predicted = self.predict(rows)
        return sorted(indices, key=lambda i: predicted[i])


def _lightgbm() -> object:
    try:
        import lightgbm
    except ImportError:
        raise EmberError(
            "ember tune's cost model needs LightGBM: pip install 'ember[tune]'"
        ) from None
    return lightgbm


__all__ = ["CostModel", "features"]
