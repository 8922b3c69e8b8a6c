"""The reference semantics of `graph.if`, `graph.loop` and `graph.scan`.

Each runs its region(s) with the interpreter's `run_block`, in an
environment that holds every value of the enclosing regions (bodies use
them directly), and checks its results against the declared types:

- `graph.if` runs the branch its condition picks.
- `graph.loop` runs while the trip count is not reached and the condition
  holds (the body's, also without a condition operand, as onnxruntime
  does); scan outputs stack one slice per iteration along a new leading
  axis.
- `graph.scan` slices each scan input along its axis (from the end for
  direction 1), carries the states, and stacks each scan output's slices
  along its axis (in reverse order for direction 1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, Operation, SSAValue

from ember.dialects.graph import IfOp, LoopOp, ScanOp
from ember.dialects.graph.types import DYNAMIC, numpy_dtype
from ember.reference.evaluate import InterpreterError, check_result

Env = dict[SSAValue, np.ndarray]
RunBlock = Callable[[Block, Env], list[np.ndarray]]


def _checked(op: Operation, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
    return [check_result(op.name, i, np.asarray(a), t)  # type: ignore[arg-type]
            for i, (a, t) in enumerate(zip(arrays, op.result_types))]  # fmt: skip


def _truth(array: np.ndarray, op: Operation) -> bool:
    if array.size != 1:
        raise InterpreterError(f"{op.name}: the condition has {array.size} elements, not one")
    return bool(array.reshape(-1)[0])


def _run_body(block: Block, env: Env, args: Sequence[np.ndarray], run_block: RunBlock) -> list:
    inner = dict(env)
    inner.update(zip(block.args, args))
    return run_block(block, inner)


def run_if(op: IfOp, env: Env, run_block: RunBlock) -> list[np.ndarray]:
    branch = op.then_branch if _truth(env[op.cond], op) else op.else_branch
    return _checked(op, _run_body(branch.block, env, [], run_block))


def _stacked(slices: list[np.ndarray], declared: object, axis: int) -> np.ndarray:
    """The slices stacked along `axis`; no slices: an empty array of the declared type."""
    if slices:
        return np.stack(slices, axis=axis)
    assert isinstance(declared, TensorType)
    shape = [0 if d == DYNAMIC else d for d in declared.get_shape()]
    shape[axis] = 0
    return np.zeros(shape, dtype=numpy_dtype(declared.element_type))


def run_loop(op: LoopOp, env: Env, run_block: RunBlock) -> list[np.ndarray]:
    trips = op.max_trip_count
    cond = op.condition
    if trips is None and cond is None:
        raise InterpreterError(f"{op.name} has neither a trip count nor a condition: it never ends")
    limit = int(env[trips].reshape(-1)[0]) if trips is not None else None
    running = _truth(env[cond], op) if cond is not None else True
    carried = [env[v] for v in op.carried]
    scans: list[list[np.ndarray]] = [[] for _ in range(op.num_scan_outputs)]
    block = op.body.block
    iteration = 0
    while running and (limit is None or iteration < limit):
        args = [np.array(iteration, np.int64), np.array(running), *carried]
        outputs = _run_body(block, env, args, run_block)
        running = _truth(outputs[0], op)
        carried = outputs[1 : 1 + len(carried)]
        for scan, value in zip(scans, outputs[1 + len(carried) :]):
            scan.append(value)
        iteration += 1
    stacked = [_stacked(s, t, 0)
               for s, t in zip(scans, op.result_types[len(carried) :])]  # fmt: skip
    return _checked(op, [*carried, *stacked])


def run_scan(op: ScanOp, env: Env, run_block: RunBlock) -> list[np.ndarray]:
    states_count = op.num_states
    states = [env[v] for v in op.inputs[:states_count]]
    scan_inputs = [env[v] for v in op.inputs[states_count:]]
    in_axes, in_dirs = op.input_axes(), op.input_directions()
    lengths = {x.shape[a] for x, a in zip(scan_inputs, in_axes)}
    if len(lengths) != 1:
        raise InterpreterError(f"{op.name}: the scan inputs have different lengths {lengths}")
    length = lengths.pop()
    scans: list[list[np.ndarray]] = [[] for _ in range(op.num_scan_outputs)]
    for step in range(length):
        slices = [np.take(x, length - 1 - step if d else step, axis=a)
                  for x, a, d in zip(scan_inputs, in_axes, in_dirs)]  # fmt: skip
        outputs = _run_body(op.body.block, env, [*states, *slices], run_block)
        states = outputs[:states_count]
        for scan, value in zip(scans, outputs[states_count:]):
            scan.append(value)
    declared = op.result_types[states_count:]
    stacked = [_stacked(s[::-1] if d else s, t, a) for s, t, a, d in
               zip(scans, declared, op.output_axes(), op.output_directions())]  # fmt: skip
    return _checked(op, [*states, *stacked])
