"""The cuda target end to end: models lowered to the `gpu` level match
onnxruntime when their kernels run on this CPU (every block and thread,
barriers respected), their PTX passes ptxas, and the generated kernels
need what they have (a barrier removed or a thread index shifted makes the
emulated result wrong)."""

from __future__ import annotations

import dataclasses
import functools
import re
import shutil
from collections.abc import Callable
from unittest import mock

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import arith, gpu
from xdsl.dialects.builtin import MemRefType, ModuleOp

import ember
from ember.dialects.ember_gpu import SharedOp
from ember.frontends.onnx import import_onnx
from ember.options import Options
from ember.report import CompileReport
from ember.targets.cuda import default_schedule
from ember.targets.cuda.emulator import emulate
from ember.targets.cuda.ptxas import assemble
from ember.targets.cuda.target import EmulatedModel, GpuModule
from ember.targets.registry import target_named
from tests.support.models import (
    gpt_block,
    light_model_path,
    mlp,
    random_inputs,
    run_onnxruntime,
    transformer_encoder,
    with_random_weights,
)

needs_ptxas = pytest.mark.skipif(shutil.which("ptxas") is None,
                                 reason="ptxas (CUDA toolkit) is not on PATH")  # fmt: skip


def _squeezenet() -> onnx.ModelProto:
    return with_random_weights(onnx.load(light_model_path("squeezenet")), 0)


def _resnet50() -> onnx.ModelProto:
    return with_random_weights(onnx.load(light_model_path("resnet50")), 0)


def _matmul_bias_relu(m: int = 70, k: int = 96, n: int = 80) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((k, n)).astype(np.float32), "W"),
             numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), "B")]  # fmt: skip
    nodes = [helper.make_node("MatMul", ["x", "W"], ["y"]),
             helper.make_node("Add", ["y", "B"], ["z"]), helper.make_node("Relu", ["z"], ["r"])]  # fmt: skip
    graph = helper.make_graph(
        nodes, "mm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("r", TensorProto.FLOAT, [m, n])], inits)  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "mlp": lambda: mlp(batch=16, sizes=(128, 256, 256, 10)),
    "bert_layer": lambda: transformer_encoder(seq=32, hidden=128, heads=2, ffn=256),
    "gpt_block": lambda: gpt_block(seq=32, hidden=128, heads=2, ffn=256),
    "squeezenet": _squeezenet,
}


def _check_emulated(model: onnx.ModelProto) -> None:
    feeds = random_inputs(model)
    compiled = ember.compile(model, target="cuda", emulate=True)
    assert isinstance(compiled, EmulatedModel)
    expected = run_onnxruntime(model, feeds)
    for got, want in zip(compiled.run(feeds), expected, strict=True):
        assert np.asarray(want).std() > 0
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-5)  # as the CPU's model tests


@pytest.mark.parametrize(
    "name", [n if n == "mlp" else pytest.param(n, marks=pytest.mark.slow) for n in MODELS]
)  # the emulator runs every thread of the kernels (SqueezeNet's for 20 s, a transformer
# layer's for 8 s): with the slow tests, but for the MLP
def test_emulated_models_match_onnxruntime(name: str) -> None:
    _check_emulated(MODELS[name]())


@pytest.mark.slow
def test_emulated_resnet50_matches_onnxruntime() -> None:
    _check_emulated(_resnet50())


def _lowered(model: onnx.ModelProto) -> GpuModule:
    target = target_named("cuda")
    return target.lower(import_onnx(model), CompileReport(), Options())  # type: ignore[attr-defined]


@needs_ptxas
@pytest.mark.parametrize("name", ["mlp", pytest.param("squeezenet", marks=pytest.mark.slow)])
def test_every_kernel_passes_ptxas_for_sm80_and_sm90(name: str) -> None:
    lowered = _lowered(MODELS[name]())
    kernels = {launch.kernel for launch in lowered.plan.launches}
    for arch in ("sm_80", "sm_90"):
        report = assemble(lowered.ptx(arch), arch)
        assert kernels <= set(report.kernels)
        assert all(k.spill_stores == 0 for k in report.kernels.values())


@needs_ptxas
@pytest.mark.parametrize(
    "make",
    [
        lambda: transformer_encoder(seq=128),
        pytest.param(lambda: gpt_block(seq=128), marks=pytest.mark.slow),
    ],
    ids=["bert_base_layer", "gpt_block"],
)
def test_full_size_transformer_layers_pass_ptxas(make: Callable[[], onnx.ModelProto]) -> None:
    lowered = _lowered(make())
    report = assemble(lowered.ptx("sm_90"), "sm_90")
    tiled = [k for k in report.kernels.values() if k.shared_bytes]
    assert tiled and all(k.barriers >= 1 for k in tiled)  # the projections are block-tiled


@needs_ptxas
@pytest.mark.slow
def test_resnet50_passes_ptxas() -> None:
    lowered = _lowered(_resnet50())
    assert len(assemble(lowered.ptx("sm_90"), "sm_90").kernels) == len(
        {launch.kernel for launch in lowered.plan.launches}
    )


def test_the_tiled_matmul_stages_its_tiles_in_16_byte_loads() -> None:
    # 70 x 96 by 96 x 80 in 64 x 64 blocks: both operands are contiguous
    # along their tile's inner dim (k, n) with extents multiples of 4, so
    # each thread stages its share of a 64 x 16 tile in one 16-byte load
    # and store, double-buffered; the emulated result still matches.
    lowered, x, expected = _matmul_case(2)
    ptx = lowered.ptx("sm_90")
    assert re.search(r"ld\.global\.v4\.(f32|b32)", ptx)
    assert re.search(r"st\.shared\.v4\.(f32|b32)", ptx)
    assert _stages(lowered) == 2
    np.testing.assert_allclose(
        _run(lowered.module.clone(), lowered, x), expected, rtol=1e-4, atol=1e-4
    )
    if shutil.which("ptxas") is not None:
        [kernel] = assemble(ptx, "sm_90").kernels.values()
        assert kernel.shared_bytes == 2 * (64 + 64) * 16 * 4
        assert (kernel.spill_stores, kernel.spill_loads) == (0, 0)


def _padded_convs(layers: int = 1) -> onnx.ModelProto:
    """`layers` x (Conv (to 32 channels, 3 x 3, pads 1) + Bias + Relu) on 1 x 8 x 10 x 10."""
    rng = np.random.default_rng(0)
    inits, nodes, previous = [], [], "x"
    for i in range(layers):
        weights = rng.standard_normal((32, 32 if i else 8, 3, 3)).astype(np.float32) * 0.3
        inits += [numpy_helper.from_array(weights, f"W{i}"),
                  numpy_helper.from_array(rng.standard_normal(32).astype(np.float32), f"B{i}")]  # fmt: skip
        nodes += [helper.make_node("Conv", [previous, f"W{i}", f"B{i}"], [f"c{i}"], pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", [f"c{i}"], [f"r{i}"])]  # fmt: skip
        previous = f"r{i}"
    graph = helper.make_graph(
        nodes, "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 10, 10])],
        [helper.make_tensor_value_info(previous, TensorProto.FLOAT, [1, 32, 10, 10])], inits)  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_padded_convolution_is_one_launch_reading_with_bounds_checks() -> None:
    # The padding's fills and copy run in the tiled kernel's loads: one
    # launch, reading x itself at (oh + kh - 1, ow + kw - 1) where that is
    # inside x and 0 elsewhere. Reading x unshifted (the padding's offset
    # dropped) is wrong.
    lowered, x, expected = _expected(_padded_convs())
    [launch] = lowered.plan.launches
    assert "input:0" in launch.arguments
    np.testing.assert_allclose(
        _run(lowered.module.clone(), lowered, x), expected, rtol=1e-4, atol=1e-4
    )
    mutated = lowered.module.clone()
    shifts = [
        op
        for op in _tiled_kernel(mutated).walk()
        if isinstance(op, arith.SubiOp) and not isinstance(op.lhs.owner, arith.ConstantOp)
    ]  # not 1 - the current pair
    assert shifts  # oh + kh - 1 and ow + kw - 1, per load
    for shift in shifts:
        shift.result.replace_all_uses_with(shift.lhs)
    assert not np.allclose(_run(mutated, lowered, x), expected, rtol=1e-4, atol=1e-4)


def test_a_padded_convolutions_source_is_not_overwritten_by_its_output() -> None:
    # The middle convolution reads the first one's output through its
    # padding while it writes its own: memory planning must keep the two
    # apart (the padding's copy, their source's last reader, stands after
    # the output's fill), or blocks storing outputs overwrite inputs that
    # others have yet to read. One launch a convolution.
    lowered, x, expected = _expected(_padded_convs(3))
    assert len(lowered.plan.launches) == 3
    np.testing.assert_allclose(
        _run(lowered.module.clone(), lowered, x), expected, rtol=1e-4, atol=1e-4
    )


def test_the_launch_plan_of_a_tiled_product_and_its_epilogue() -> None:
    lowered = _lowered(_matmul_bias_relu())
    # 70 x 80 outputs in 64 x 64 tiles of 16 x 16 threads; the fill is the
    # accumulators' start, the bias and ReLU run in registers: one launch.
    [launch] = lowered.plan.launches
    assert launch.kernel == "main_kernel0"
    assert (launch.grid, launch.block) == ((2, 2, 1), (16, 16, 1))
    assert launch.arguments[0] == "input:0" and "output:0" in launch.arguments


def test_the_launch_plan_of_elementwise_work() -> None:
    lowered = _lowered(_matmul_bias_relu(m=8))  # too few rows to tile
    grids = [launch.grid for launch in lowered.plan.launches]
    assert grids[-1] == (3, 1, 1)  # 8 x 80 points, 256 a block
    assert all(launch.block == (256, 1, 1) for launch in lowered.plan.launches)


def _run(module: ModuleOp, lowered: GpuModule, x: np.ndarray) -> np.ndarray:
    """The emulated result of `module`, a (possibly changed) copy of `lowered`'s."""
    changed = dataclasses.replace(lowered, module=module)
    [result] = EmulatedModel(changed, emulate(module, target_named("cpu").jit))(x)
    return result


def _tiled_kernel(module: ModuleOp) -> gpu.FuncOp:
    return next(op for op in module.walk()
                if isinstance(op, gpu.FuncOp) and any(isinstance(b, gpu.BarrierOp) for b in op.walk()))  # fmt: skip


def _without_barrier(lowered: GpuModule, which: int) -> ModuleOp:
    """A copy of `lowered`'s module whose tiled kernel lacks its barrier
    number `which` (0: the first, -1: the last)."""
    mutated = lowered.module.clone()
    barriers = [op for op in _tiled_kernel(mutated).walk() if isinstance(op, gpu.BarrierOp)]
    # one stage, per k step: stage; barrier; accumulate; barrier. Two: stage
    # the first step; barrier; per k step: load; accumulate; store; barrier.
    assert len(barriers) == 2
    barriers[which].detach()
    barriers[which].erase()
    return mutated


def _expected(model: onnx.ModelProto) -> tuple[GpuModule, np.ndarray, np.ndarray]:
    """`model` lowered, an input, and onnxruntime's output for it."""
    x = random_inputs(model)["x"]
    [expected] = run_onnxruntime(model, {"x": x})
    return _lowered(model), x, expected


@functools.cache
def _matmul_case(stages: int) -> tuple[GpuModule, np.ndarray, np.ndarray]:
    """`_expected` of the default MatMul+Add+Relu, its tiles in `stages`
    pairs (the tests clone the module before changing it)."""
    with mock.patch.object(default_schedule, "STAGES", stages):
        return _expected(_matmul_bias_relu())


def test_the_tiled_kernel_needs_its_first_barrier() -> None:
    lowered, x, expected = _matmul_case(1)
    assert _stages(lowered) == 1
    np.testing.assert_allclose(
        _run(lowered.module.clone(), lowered, x), expected, rtol=1e-4, atol=1e-4
    )
    assert not np.allclose(_run(_without_barrier(lowered, 0), lowered, x), expected,
                           rtol=1e-4, atol=1e-4)  # fmt: skip


def test_the_tiled_kernel_needs_its_last_barrier() -> None:
    # Without it, thread (ty, tx) accumulates its k step from the tiles and
    # at once stages its elements of the next step's tiles (the k loop's back
    # edge is no meeting point), before the threads after it accumulate: the
    # rest of its row of threads (ty, tx' > tx) reads A-tile elements it
    # copied, the rest of its column (ty' > ty, tx) B-tile elements it
    # copied, of the wrong step. K = 96 is six steps of 16 over random data,
    # so one step's tiles differ from the next's.
    lowered, x, expected = _matmul_case(1)
    assert not np.allclose(_run(_without_barrier(lowered, -1), lowered, x), expected,
                           rtol=1e-4, atol=1e-4)  # fmt: skip


def test_the_double_buffered_kernel_needs_its_barrier() -> None:
    # Without the one barrier of a k step, thread (ty, tx) stores the next
    # step's tiles into the other pair and goes on to accumulate from them
    # before the threads after it have stored theirs. (It is right as it
    # stands: test_the_tiled_matmul_stages_its_tiles_in_16_byte_loads.)
    lowered, x, expected = _matmul_case(2)
    assert _stages(lowered) == 2
    assert not np.allclose(_run(_without_barrier(lowered, -1), lowered, x), expected,
                           rtol=1e-4, atol=1e-4)  # fmt: skip


def test_the_double_buffered_kernel_needs_its_second_pair() -> None:
    # Storing the next step's tiles into the pair being read (one barrier a
    # step, one pair) overwrites tiles the threads after the storing one
    # have yet to accumulate from.
    lowered, x, expected = _matmul_case(2)
    mutated = lowered.module.clone()
    other = next(op for op in _tiled_kernel(mutated).walk() if isinstance(op, arith.SubiOp))
    other.result.replace_all_uses_with(other.rhs)  # 1 - current -> current
    assert not np.allclose(_run(mutated, lowered, x), expected, rtol=1e-4, atol=1e-4)


def _stages(lowered: GpuModule) -> int:
    """The pairs of tiles of the tiled kernel (a pair's tiles are 3-D)."""
    tile = next(op.buffer.type for op in _tiled_kernel(lowered.module).walk()
                if isinstance(op, SharedOp))  # fmt: skip
    assert isinstance(tile, MemRefType)
    return tile.get_shape()[0] if tile.get_num_dims() == 3 else 1


def test_a_shifted_thread_index_is_wrong() -> None:
    lowered, x, expected = _matmul_case(2)
    mutated = lowered.module.clone()
    # The tiled kernel: thread (tx, ty) computes (tx + 1, ty)'s outputs.
    kernel = _tiled_kernel(mutated)
    thread = next(op for op in kernel.walk() if isinstance(op, gpu.ThreadIdOp))
    one = arith.ConstantOp.from_int_and_width(1, thread.result.type)
    shifted = arith.AddiOp(thread.result, one.result)
    assert thread.parent_block() is not None
    thread.parent_block().insert_ops_after([one, shifted], thread)  # type: ignore[union-attr]
    thread.result.replace_uses_with_if(shifted.result, lambda use: use.operation is not shifted)
    assert not np.allclose(_run(mutated, lowered, x), expected, rtol=1e-4, atol=1e-4)


def test_deploy_writes_ptx_weights_and_the_launch_plan(tmp_path: object) -> None:
    from pathlib import Path

    from ember.deploy import compile_to_directory

    out = Path(str(tmp_path))
    deployed = compile_to_directory(_matmul_bias_relu(), out, "mm", target="cuda")
    names = sorted(p.name for p in deployed.files)
    expected = ["mm.json", "mm.ptx", "mm.weights", *(["mm.cubin"] if shutil.which("ptxas") else [])]
    assert names == sorted(expected)
    assert ".entry main_kernel0" in (out / "mm.ptx").read_text()
    import json

    manifest = json.loads((out / "mm.json").read_text())
    assert manifest["launches"][0]["block"] == [16, 16, 1]
    assert (out / "mm.weights").stat().st_size == manifest["weights_bytes"]


SYMBOLIC: dict[str, Callable[[], onnx.ModelProto]] = {
    "mlp_batch": lambda: mlp(batch="N", sizes=(128, 256, 10)),
    "bert_layer_sequence": lambda: transformer_encoder(seq="S", hidden=128, heads=2, ffn=256),
}


def _inputs_at(model: onnx.ModelProto, size: int, seed: int) -> dict[str, np.ndarray]:
    """The model's inputs with every symbolic dim `size`."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for info in model.graph.input:
        shape = [d.dim_value or size for d in info.type.tensor_type.shape.dim]
        if info.type.tensor_type.elem_type == TensorProto.FLOAT:
            feeds[info.name] = rng.standard_normal(shape).astype(np.float32)
        else:
            feeds[info.name] = rng.integers(0, 2, shape).astype(np.int64)
    return feeds


@pytest.mark.parametrize(
    "name", [n if n == "mlp_batch" else pytest.param(n, marks=pytest.mark.slow) for n in SYMBOLIC]
)
def test_symbolic_models_run_emulated_at_every_size(name: str) -> None:
    model = SYMBOLIC[name]()
    compiled = ember.compile(model, target="cuda", emulate=True)
    assert isinstance(compiled, EmulatedModel)  # one version for every size
    for size, seed in ((3, 0), (17, 1)):
        feeds = _inputs_at(model, size, seed)
        for got, want in zip(compiled.run(feeds), run_onnxruntime(model, feeds), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-5)  # as the CPU's model tests


@needs_ptxas
@pytest.mark.parametrize(
    "make",
    [
        lambda: mlp(batch="N"),
        pytest.param(lambda: transformer_encoder(seq="S"), marks=pytest.mark.slow),
    ],
    ids=["mlp_batch", "bert_base_layer_sequence"],
)
def test_symbolic_models_give_ptx_for_every_size(make: Callable[[], onnx.ModelProto]) -> None:
    lowered = _lowered(make())
    assert lowered.plan.symbolic and not isinstance(lowered.plan.arena_bytes, int)
    [symbol] = lowered.ranges
    assert any(str(g) != "1" and symbol in str(g) for launch in lowered.plan.launches
               for g in launch.grid)  # fmt: skip
    report = assemble(lowered.ptx("sm_90"), "sm_90")
    assert {launch.kernel for launch in lowered.plan.launches} <= set(report.kernels)
