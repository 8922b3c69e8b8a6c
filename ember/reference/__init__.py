"""The NumPy reference interpreter for `graph` IR: Ember's semantic ground truth.

    outputs = ember.reference.run(module, {"input": array})

Every `graph` op runs through its NumPy kernel (`ember.reference.kernels`),
and every result is checked against the type the IR declares for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, SSAValue

from ember.dialects.graph import ConstantOp, FusedOp, GraphOp, IfOp, LoopOp, ScanOp, YieldOp
from ember.dialects.graph.types import DYNAMIC, array_from_dense, numpy_dtype, shape_of
from ember.reference.control_flow import run_if, run_loop, run_scan
from ember.reference.evaluate import InterpreterError, evaluate

__all__ = ["InterpreterError", "entry_function", "input_names", "output_names", "run"]


def entry_function(module: ModuleOp) -> FuncOp:
    """`@main`, or the module's only function."""
    funcs = [op for op in module.ops if isinstance(op, FuncOp)]
    for func in funcs:
        if func.sym_name.data == "main":
            return func
    if len(funcs) == 1:
        return funcs[0]
    raise InterpreterError("the module has no @main function")


def _names(attrs: ArrayAttr[DictionaryAttr] | None, fallbacks: Sequence[str]) -> list[str]:
    """The `onnx.name` of each argument or result, else its fallback."""
    names = []
    for index, fallback in enumerate(fallbacks):
        entry = attrs.data[index].data.get("onnx.name") if attrs is not None else None
        names.append(entry.data if isinstance(entry, StringAttr) else fallback)
    return names


def input_names(func: FuncOp) -> list[str]:
    """The model's input names (`onnx.name`; `argN` where there is none), in order."""
    args = func.body.block.args
    return _names(func.arg_attrs, [a.name_hint or f"arg{i}" for i, a in enumerate(args)])


def output_names(func: FuncOp) -> list[str]:
    """The model's output names (`onnx.name`; `outputN` where there is none), in order."""
    count = len(func.function_type.outputs.data)
    return _names(func.res_attrs, [f"output{i}" for i in range(count)])


def _bind_inputs(
    func: FuncOp, inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray]
) -> dict[SSAValue, np.ndarray]:
    args = func.body.block.args
    names = input_names(func)
    if isinstance(inputs, Mapping):
        missing = [n for n in names if n not in inputs]
        unknown = [n for n in inputs if n not in names]
        if missing or unknown:
            raise InterpreterError(
                f"inputs do not match the model: missing {missing}, unknown {unknown}"
            )
        arrays = [inputs[n] for n in names]
    else:
        arrays = list(inputs)
        if len(arrays) != len(args):
            raise InterpreterError(f"the model takes {len(args)} inputs, got {len(arrays)}")
    env: dict[SSAValue, np.ndarray] = {}
    for name, arg, array in zip(names, args, arrays):
        array = np.asarray(array)
        arg_type = arg.type
        assert isinstance(arg_type, TensorType)
        expected = shape_of(arg_type)
        dtype = numpy_dtype(arg_type.element_type)
        if array.dtype != dtype:
            raise InterpreterError(f"input '{name}' has dtype {array.dtype}, expected {dtype}")
        if array.ndim != len(expected) or any(
            d != DYNAMIC and d != a for d, a in zip(expected, array.shape)
        ):
            raise InterpreterError(f"input '{name}' has shape {array.shape}, expected {arg_type}")
        env[arg] = array
    return env


def run(
    module: ModuleOp, inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray]
) -> list[np.ndarray]:
    """Runs the module's entry function on NumPy inputs (by name or in order)."""
    func = entry_function(module)
    return _run_block(func.body.block, _bind_inputs(func, inputs))


def _run_block(block: Block, env: dict[SSAValue, np.ndarray]) -> list[np.ndarray]:
    """Runs the ops of `block` with its arguments bound in `env`; returns the
    values its terminator (func.return or graph.yield) passes on."""
    for op in block.ops:
        if isinstance(op, ReturnOp | YieldOp):
            return [env[v] for v in op.operands]
        if isinstance(op, ConstantOp):
            value = op.properties["value"]
            env[op.results[0]] = array_from_dense(value)  # type: ignore[arg-type]
        elif isinstance(op, GraphOp):
            outputs = evaluate(op, [env[v] for v in op.operands])
            env.update(zip(op.results, outputs))
        elif isinstance(op, FusedOp):
            inner = dict(zip(op.block.args, (env[v] for v in op.inputs)))
            env.update(zip(op.results, _run_block(op.block, inner)))
        elif isinstance(op, IfOp | LoopOp | ScanOp):
            # Bodies read values from above: they run in (a copy of) `env`.
            runner = {IfOp: run_if, LoopOp: run_loop, ScanOp: run_scan}[type(op)]
            env.update(zip(op.results, runner(op, env, _run_block)))  # type: ignore[operator]
        else:
            raise InterpreterError(f"the reference interpreter cannot run '{op.name}'")
    raise InterpreterError("the entry function has no return")
