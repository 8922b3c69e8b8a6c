"""`targets/cuda/runtime.py`: a compiled model run through CUDA's driver API.

Three layers, so that what needs no GPU is checked here:

- without cuda-bindings, or with it but without a driver, a `CudaModel`
  cannot be made and says so in one line (`CudaUnavailable`);
- the host side against a simulated driver (`FakeDriver`): device memory
  is host memory, the kernels are NumPy functions of the buffers they are
  given, and each launch's `kernelParams` is decoded as the driver reads
  it (an array of pointers to 64-bit values). Where cuda-bindings is
  installed but the driver library is missing, every call is first made on
  the real bindings too, which check their arguments before loading the
  driver: a `TypeError` there is a call the real API would reject;
- on a GPU (skipped elsewhere with `cuda_available()`'s reason): the same
  program's PTX, from `convert-gpu-to-nvvm` and `ptx_of`, against NumPy.

The program (tests/support/cuda_programs.py): `scale` writes x * w into
the arena, `shift` writes arena + 1 to y. The emulator runs it too, so the
expected values of the GPU test are checked here.

A symbolic model (an MLP over a batch `N`, lowered by the cuda target to a
plan over N and PTX whose kernels take the buffers' sizes) runs on the
simulated driver at several batch sizes. Its kernels are PTX, which the
stand-in cannot run, so those tests check what the driver is given: each
launch's grid and decoded parameters (pointers and sizes), the buffers'
allocations and copies; its numbers are the emulator's tests'
(test_target.py).
"""

from __future__ import annotations

import ctypes
import dataclasses
import enum
import math
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import onnx
import pytest

from ember.errors import EmberError
from ember.frontends.onnx import import_onnx
from ember.options import Options
from ember.report import CompileReport
from ember.targets.calls import InputError
from ember.targets.cuda import runtime
from ember.targets.cuda.emulator import emulate
from ember.targets.cuda.errors import CudaError, CudaUnavailable, LaunchPlanMismatch
from ember.targets.cuda.launch_plan import Launch, LaunchPlan
from ember.targets.cuda.runtime import CudaModel, check_plan, cuda_available, entry_parameters
from ember.targets.cuda.target import GpuModule
from ember.targets.registry import target_named
from tests.support.cuda_programs import BYTES, SPECS, N, data, expected, model_parts, program
from tests.support.models import mlp


@pytest.fixture(scope="module")
def parts() -> tuple[str, LaunchPlan]:
    return model_parts()


def bindings_installed() -> bool:
    try:
        from cuda.bindings import driver  # noqa: F401
    except ImportError:
        return False
    return True


# -- the program itself, and the plan against its PTX -------------------------------------


def test_the_program_computes_x_times_w_plus_one_in_the_emulator() -> None:
    x, w = data()
    y = np.full(N, np.nan, np.float32)
    emulate(program(), target_named("cpu").jit).main(
        x, y, w.view(np.int8), np.zeros(BYTES, np.int8)
    )
    np.testing.assert_allclose(y, expected(x, w), rtol=1e-6)


def test_the_plan_names_the_ptx_entries_with_one_pointer_per_argument(parts: Any) -> None:
    ptx, plan = parts
    assert plan.launches == (
        Launch("scale", (4, 1, 1), (256, 1, 1), ("input:0", "weights", "arena")),
        Launch("shift", (4, 1, 1), (256, 1, 1), ("output:0", "arena", "arena")),
    )
    assert (plan.weights_bytes, plan.arena_bytes, plan.symbolic) == (BYTES, BYTES, False)
    assert all(not sizes for sizes in plan.dynamic.values())  # one pointer per argument
    assert entry_parameters(ptx) == {"scale": ["u64"] * 3, "shift": ["u64"] * 3}
    check_plan(plan, ptx, 1, 1, BYTES)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda p: p.replace("shift", "shove"), "runs kernel 'shove', which the PTX lacks"),
        (lambda p: p.replace('"arena", "arena"', '"arena"'), "takes parameters"),
        (lambda p: p.replace("output:0", "output:1"), "argument 'output:1' is not one of"),
        (lambda p: p.replace("weights", "biases"), "argument 'biases' is not one of"),
    ],
)
def test_a_plan_that_does_not_fit_its_ptx_or_model_is_named(
    parts: Any, change: Callable[[str], str], message: str
) -> None:
    ptx, plan = parts
    import json

    changed = json.loads(change(json.dumps(plan.to_json())))
    launches = tuple(
        Launch(a["kernel"], tuple(a["grid"]), tuple(a["block"]), tuple(a["arguments"]))
        for a in changed["launches"]
    )
    wrong = LaunchPlan(launches, plan.weights_bytes, plan.arena_bytes)
    with pytest.raises(LaunchPlanMismatch, match=message):
        check_plan(wrong, ptx, 1, 1, BYTES)


def test_a_weights_blob_of_another_size_is_named(parts: Any) -> None:
    ptx, plan = parts
    with pytest.raises(LaunchPlanMismatch, match="blob has 12 bytes, the launch plan 4000"):
        check_plan(plan, ptx, 1, 1, 12)


# -- without cuda-bindings, without a driver ----------------------------------------------


def construct(parts: Any, **options: Any) -> CudaModel:
    ptx, plan = parts
    _, w = data()
    return CudaModel(*SPECS, ptx, plan, w.view(np.uint8), **options)


def test_without_cuda_bindings_the_model_says_how_to_install_it(
    parts: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A None entry makes an import fail as if the package were not there.
    for name in ["cuda", "cuda.bindings", "cuda.bindings.driver"]:
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(CudaUnavailable) as raised:
        construct(parts)
    message = str(raised.value)
    assert "\n" not in message
    assert "pip install -e '.[cuda]'" in message
    assert cuda_available() == message


@pytest.mark.skipif(not bindings_installed(), reason="cuda-bindings is not installed")
@pytest.mark.skipif(cuda_available() is None, reason="a CUDA driver and GPU are present")
def test_without_a_driver_the_model_says_so_in_one_line(parts: Any) -> None:
    with pytest.raises(CudaUnavailable) as raised:
        construct(parts)
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith("no CUDA driver/GPU available (cuInit: ")
    assert message.endswith("); run with --emulate to run the kernels on this CPU")
    assert cuda_available() == message


# -- the host side against a simulated driver ---------------------------------------------


def _real_driver_without_library() -> Any:
    """The real `cuda.bindings.driver` where its calls fail only for want of
    the driver library (so they can check arguments safely), else None."""
    if not bindings_installed():
        return None
    from cuda.bindings import driver

    try:
        driver.cuInit(0)
    except RuntimeError:
        return driver
    return None


class _Result(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_LAUNCH_FAILED = 719


class FakeDriver:
    """The part of `cuda.bindings.driver` the runtime calls, simulated on the
    host: allocations are NumPy byte arrays (a device pointer is the address
    of one), copies `ctypes.memmove`, a launch decodes `kernelParams` and
    calls the kernel's NumPy function where it has one (a kernel without
    one only has its launch recorded), a stream capture records launches
    (their parameters copied, as the driver does) for `cuGraphLaunch`.
    A launch reads as many parameters as the loaded PTX's entry declares.
    `calls` lists every call's name, `records` every launch's kernel, grid
    and parameter values, `copies` every copy's call, device pointer and
    bytes; `fail` names a kernel whose launch fails."""

    def __init__(self, kernels: dict[str, Callable[..., None]], fail: str | None = None):
        self.real = _real_driver_without_library()
        self.CUresult = self.real.CUresult if self.real else _Result
        self.kernels = kernels
        self.fail = fail
        self.memory: dict[int, np.ndarray] = {}
        self.calls: list[str] = []
        self.captured: list[tuple[str, list[int]]] | None = None
        self.graphs: dict[int, list[tuple[str, list[int]]]] = {}
        self.launched: list[str] = []
        self.records: list[tuple[str, tuple[int, int, int], list[int]]] = []
        self.copies: list[tuple[str, int, int]] = []
        self.entries: dict[str, list[str]] = {}
        self.functions: dict[int, str] = {}
        self.live: set[str] = set()
        self.CUstreamCaptureMode = self.real.CUstreamCaptureMode if self.real else _Modes
        self.CUdevice_attribute = self.real.CUdevice_attribute if self.real else _Attributes

    def __getattr__(self, call: str) -> Callable[..., tuple[Any, ...]]:
        simulate = getattr(type(self), f"_{call}", None)
        if not call.startswith("cu") or simulate is None:
            raise AttributeError(call)

        def checked(*arguments: Any) -> tuple[Any, ...]:
            self.calls.append(call)
            if self.real is not None:
                with pytest.raises(RuntimeError):  # not TypeError: the real call accepts them
                    getattr(self.real, call)(*arguments)
            return simulate(self, *arguments)

        return checked

    ok: Any = property(lambda self: self.CUresult.CUDA_SUCCESS)

    def _cuInit(self, flags: int) -> tuple[Any]:
        return (self.ok,)

    def _cuDeviceGet(self, ordinal: int) -> tuple[Any, int]:
        return self.ok, ordinal

    def _cuDeviceGetAttribute(self, attribute: Any, device: int) -> tuple[Any, int]:
        major = attribute == self.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
        return self.ok, 9 if major else 0

    def _handle(self, kind: str) -> int:
        """A new handle (unique: the number of calls so far), `kind` held until released."""
        self.live.add(kind)
        return 0x1000 + len(self.calls)

    def _release(self, kind: str) -> tuple[Any]:
        self.live.discard(kind)
        return (self.ok,)

    def _cuDevicePrimaryCtxRetain(self, device: int) -> tuple[Any, int]:
        return self.ok, self._handle("context")

    def _cuDevicePrimaryCtxRelease(self, device: int) -> tuple[Any]:
        return self._release("context")

    def _cuCtxSetCurrent(self, context: int) -> tuple[Any]:
        return (self.ok,)

    def _cuModuleLoadData(self, image: bytes) -> tuple[Any, int]:
        assert image.endswith(b"\0") and b".entry" in image
        self.entries = entry_parameters(image[:-1].decode())
        return self.ok, self._handle("module")

    def _cuModuleUnload(self, module: int) -> tuple[Any]:
        return self._release("module")

    def _cuModuleGetFunction(self, module: int, name: bytes) -> tuple[Any, int]:
        function = 0x100000 + len(self.functions)
        self.functions[function] = name.decode()
        return self.ok, function

    def _cuStreamCreate(self, flags: int) -> tuple[Any, int]:
        return self.ok, self._handle("stream")

    def _cuStreamDestroy(self, stream: int) -> tuple[Any]:
        return self._release("stream")

    def _cuStreamSynchronize(self, stream: int) -> tuple[Any]:
        return (self.ok,)

    def _cuMemAlloc(self, nbytes: int) -> tuple[Any, int]:
        assert nbytes >= 1
        buffer = np.full(nbytes, 0xCD, np.uint8)  # not zero: zeroing must be asked for
        self.memory[buffer.ctypes.data] = buffer
        return self.ok, buffer.ctypes.data

    def _cuMemFree(self, pointer: int) -> tuple[Any]:
        del self.memory[pointer]
        return (self.ok,)

    def _cuMemsetD8Async(self, pointer: int, value: int, nbytes: int, stream: int) -> tuple[Any]:
        self.buffer(pointer, nbytes)[:] = value
        return (self.ok,)

    def _cuMemcpyHtoDAsync(self, device: int, host: int, nbytes: int, stream: int) -> tuple[Any]:
        self.buffer(device, nbytes)
        self.copies.append(("HtoD", device, nbytes))
        ctypes.memmove(device, host, nbytes)
        return (self.ok,)

    def _cuMemcpyDtoHAsync(self, host: int, device: int, nbytes: int, stream: int) -> tuple[Any]:
        self.buffer(device, nbytes)
        self.copies.append(("DtoH", device, nbytes))
        ctypes.memmove(host, device, nbytes)
        return (self.ok,)

    def _cuLaunchKernel(self, handle: int, *arguments: Any) -> tuple[Any]:
        function = self.functions[handle]
        *sizes, shared, stream, params, extra = arguments
        assert (len(sizes), shared, extra) == (6, 0, 0)
        count = len(self.entries[function])
        addresses = [ctypes.c_uint64.from_address(params + 8 * i).value for i in range(count)]
        values = [ctypes.c_uint64.from_address(a).value for a in addresses]
        self.records.append((function, tuple(sizes[:3]), values))
        if self.captured is not None:
            self.captured.append((function, values))
            return (self.ok,)
        return self.run(function, values)

    def run(self, function: str, values: list[int]) -> tuple[Any]:
        self.launched.append(function)
        if function == self.fail:
            return (self.CUresult.CUDA_ERROR_LAUNCH_FAILED,)
        if function in self.kernels:
            self.kernels[function](*(self.buffer(v, BYTES).view(np.float32) for v in values))
        return (self.ok,)

    def _cuStreamBeginCapture(self, stream: int, mode: Any) -> tuple[Any]:
        self.captured = []
        return (self.ok,)

    def _cuStreamEndCapture(self, stream: int) -> tuple[Any, int]:
        graph = self._handle("graph")
        self.graphs[graph], self.captured = self.captured or [], None
        return self.ok, graph

    def _cuGraphInstantiate(self, graph: int, flags: int) -> tuple[Any, int]:
        self.live.add("graph exec")
        return self.ok, graph

    def _cuGraphLaunch(self, graph: int, stream: int) -> tuple[Any]:
        for function, values in self.graphs[graph]:
            if (result := self.run(function, values)) != (self.ok,):
                return result
        return (self.ok,)

    def _cuGraphExecDestroy(self, graph: int) -> tuple[Any]:
        return self._release("graph exec")

    def _cuGraphDestroy(self, graph: int) -> tuple[Any]:
        return self._release("graph")

    def _cuEventCreate(self, flags: int) -> tuple[Any, int]:
        return self.ok, self._handle(f"event {len(self.calls)}")

    def _cuEventDestroy(self, event: int) -> tuple[Any]:
        return self._release(f"event {event - 0x1000}")

    def _cuEventRecord(self, event: int, stream: int) -> tuple[Any]:
        return (self.ok,)

    def _cuEventSynchronize(self, event: int) -> tuple[Any]:
        return (self.ok,)

    def _cuEventElapsedTime(self, start: int, end: int) -> tuple[Any, float]:
        return self.ok, 0.25  # milliseconds

    def _cuGetErrorString(self, result: Any) -> tuple[Any, bytes]:
        return self.ok, b"unspecified launch failure"

    def buffer(self, pointer: int, nbytes: int) -> np.ndarray:
        """The allocation starting at device pointer `pointer`, checked to hold `nbytes`."""
        assert pointer in self.memory, f"{pointer:#x} is not a device pointer"
        assert self.memory[pointer].nbytes >= nbytes
        return self.memory[pointer][:nbytes]


class _Modes(enum.IntEnum):
    CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1


class _Attributes(enum.IntEnum):
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76


def _scale(x: np.ndarray, w: np.ndarray, arena: np.ndarray) -> None:
    arena[:] = x * w


def _shift(y: np.ndarray, arena: np.ndarray, _: np.ndarray) -> None:
    y[:] = arena + np.float32(1)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeDriver]:
    driver = FakeDriver({"scale": _scale, "shift": _shift})
    monkeypatch.setattr(runtime, "load_driver", lambda: driver)
    yield driver


@pytest.mark.parametrize("graph", [False, True])
def test_the_plan_runs_in_order_on_the_buffers_of_its_roles(
    parts: Any, fake: FakeDriver, graph: bool
) -> None:
    model = construct(parts, graph=graph)
    for seed in (1, 2):  # the buffers and parameters are reused from call to call
        x, _ = data(seed)
        [y] = model(x)
        np.testing.assert_array_equal(y, expected(x, data()[1]))
    assert model.run({"x": x})[0].shape == (N,)
    assert fake.launched == ["scale", "shift"] * 3
    assert fake.calls.count("cuLaunchKernel") == (2 if graph else 6)
    model.close()
    assert fake.memory == {} and fake.live == set()
    model.close()  # once only


def test_launch_times_are_the_events_seconds_and_release_them(parts: Any, fake: FakeDriver) -> None:
    model = construct(parts)
    assert model.launch_times([data()[0]], repeat=3) == [0.25e-3] * 3
    assert fake.launched == ["scale", "shift"] * 3
    assert not any(kind.startswith("event") for kind in fake.live)


def test_a_call_is_checked_before_any_copy(parts: Any, fake: FakeDriver) -> None:
    model = construct(parts)
    copies = fake.calls.count("cuMemcpyHtoDAsync")
    with pytest.raises(InputError, match="got shape"):
        model(np.zeros(3, np.float32))
    assert fake.calls.count("cuMemcpyHtoDAsync") == copies


def test_a_failed_launch_names_the_call_and_the_kernel(parts: Any, fake: FakeDriver) -> None:
    fake.fail = "shift"
    model = construct(parts)
    with pytest.raises(CudaError) as raised:
        model(data()[0])
    assert str(raised.value).startswith(
        "cuLaunchKernel (kernel 'shift', grid (4, 1, 1), block (256, 1, 1)) failed: "
        "CUDA_ERROR_LAUNCH_FAILED"
    )


def test_a_model_that_fails_to_construct_releases_what_it_took(
    parts: Any, fake: FakeDriver
) -> None:
    ptx, plan = parts
    with pytest.raises(CudaError, match="the PTX targets sm_100, device 0 is sm_90"):
        CudaModel(*SPECS, ptx.replace(".target sm_90", ".target sm_100"), plan, data()[1])
    assert fake.memory == {} and fake.live == set()


# -- a symbolic model: one plan for every batch size -------------------------------------


def _symbolic_mlp() -> onnx.ModelProto:
    return mlp(batch="N", sizes=(16, 32, 8))


@pytest.fixture(scope="module")
def symbolic() -> tuple[GpuModule, str]:
    """An MLP over a batch N lowered to the `gpu` level, and its PTX."""
    target = target_named("cuda")
    lowered = target.lower(import_onnx(_symbolic_mlp()), CompileReport(), Options())  # type: ignore[attr-defined]
    return lowered, lowered.ptx("sm_90")


def _symbolic_model(symbolic: tuple[GpuModule, str], **options: Any) -> CudaModel:
    lowered, ptx = symbolic
    return CudaModel(lowered.inputs, lowered.outputs, ptx, lowered.plan, lowered.weights,
                     ranges=lowered.ranges, **options)  # fmt: skip


def test_the_ptx_takes_each_buffers_sizes_where_the_plan_says(symbolic: Any) -> None:
    lowered, ptx = symbolic
    plan = lowered.plan
    assert plan.symbolic and str(plan.arena_bytes) == "256 * N"
    assert plan.dynamic == {"input:0": (0,), "output:0": (0,), "weights": (), "arena": (0,)}
    sizes = {"input:0": 1, "output:0": 1, "weights": 0, "arena": 1}
    for launch in plan.launches:
        passed = sum(1 + sizes[role] for role in launch.arguments)
        assert entry_parameters(ptx)[launch.kernel] == ["u64"] * passed
    check_plan(plan, ptx, 1, 1, plan.weights_bytes)


@pytest.mark.parametrize(
    ("dynamic", "message"),
    [
        ({"input:0": ()}, r"kernel 'main_kernel1' takes parameters \['u64 .ptr', 'u64', "
                          r"'u64 .ptr', 'u64 .ptr', 'u64'\] in the PTX, the plan passes 4 "),
        # as many parameters, one in the wrong place: the weights' size where the PTX has a pointer
        ({"input:0": (), "weights": (0,)}, r"the plan passes 5 \(input:0: pointer, weights: "
                                           r"pointer \+ 1 size, arena: pointer \+ 1 size\)"),
        ({"input:0": (0, 2)}, r"buffer 'input:0': the plan passes the sizes of its axes \[0, 2\], "
                              "but gives it 2 dims"),
    ],
)  # fmt: skip
def test_a_plan_whose_sizes_disagree_with_the_ptx_is_named(
    symbolic: Any, dynamic: dict[str, tuple[int, ...]], message: str
) -> None:
    lowered, ptx = symbolic
    # main_kernel1 (input:0, weights, arena) alone: the one that takes the weights
    [launch] = [launch for launch in lowered.plan.launches if launch.kernel == "main_kernel1"]
    assert launch.arguments == ("input:0", "weights", "arena")
    wrong = dataclasses.replace(lowered.plan, launches=(launch,),
                                dynamic={**lowered.plan.dynamic, **dynamic})  # fmt: skip
    with pytest.raises(LaunchPlanMismatch, match=message):
        check_plan(wrong, ptx, 1, 1, lowered.plan.weights_bytes)


def test_a_symbolic_model_runs_each_batch_with_its_pointers_and_sizes(
    symbolic: Any, fake: FakeDriver
) -> None:
    lowered, _ = symbolic
    plan = lowered.plan
    model = _symbolic_model(symbolic)
    assert model.symbolic
    assert fake.calls.count("cuMemAlloc") == 1  # the weights; the rest waits for a batch size
    [(_, weights, _)] = fake.copies
    allocations = []
    for n in (3, 17, 5, 17):
        x = np.random.default_rng(n).standard_normal((n, 16)).astype(np.float32)
        records, copies = len(fake.records), len(fake.copies)
        [y] = model(x)
        allocations.append((fake.calls.count("cuMemAlloc"), fake.calls.count("cuMemFree")))
        assert y.shape == (n, 8) and y.dtype == np.float32
        [(_, inputs, in_bytes), (_, outputs, out_bytes)] = fake.copies[copies:]
        assert (in_bytes, out_bytes) == (x.nbytes, y.nbytes)
        [arena] = set(fake.memory) - {weights, inputs, outputs}
        assert fake.memory[arena].nbytes >= 256 * n
        parameters = {"input:0": [inputs, n], "output:0": [outputs, n], "weights": [weights],
                      "arena": [arena, 256 * n]}  # fmt: skip
        launched = fake.records[records:]
        assert [kernel for kernel, _, _ in launched] == [launch.kernel for launch in plan.launches]
        for (_, grid, values), launch in zip(launched, plan.launches):
            assert values == [v for role in launch.arguments for v in parameters[role]]
            assert grid == tuple(g.evaluate({"N": n}) if not isinstance(g, int) else g
                                 for g in launch.grid)  # fmt: skip
        assert launched[0][1] == (math.ceil(32 * n / 256), 1, 1)  # (32 * N + 255) floordiv 256
    # 4 buffers at N=3, the input, output and arena grown once for N=17, kept for 5 and 17
    assert allocations == [(4, 0), (7, 3), (7, 3), (7, 3)]
    model.close()
    assert fake.memory == {} and fake.live == set()


def test_a_symbolic_model_names_the_input_axis_and_symbol_before_any_copy(
    symbolic: Any, fake: FakeDriver
) -> None:
    model = _symbolic_model(symbolic)
    copies = len(fake.copies)
    with pytest.raises(InputError, match=r"input 'input' float32\[N, 16\] axis 1 is 15, but "
                                         r"16 = 16 for N=3"):  # fmt: skip
        model(np.zeros((3, 15), np.float32))
    with pytest.raises(InputError, match=r"input 'input' axis 0: N = 0 is outside its range 1\.\."):
        model(np.zeros((0, 16), np.float32))
    assert len(fake.copies) == copies and fake.calls.count("cuMemAlloc") == 1


def test_an_empty_batch_launches_nothing_where_its_range_admits_it(
    symbolic: Any, fake: FakeDriver
) -> None:
    lowered, ptx = symbolic
    model = CudaModel(lowered.inputs, lowered.outputs, ptx, lowered.plan, lowered.weights,
                      ranges={"N": (0, None)})  # fmt: skip
    [y] = model(np.zeros((0, 16), np.float32))
    assert y.shape == (0, 8) and fake.records == []


def test_launch_times_of_a_symbolic_model_bind_the_inputs(symbolic: Any, fake: FakeDriver) -> None:
    model = _symbolic_model(symbolic)
    assert model.launch_times([np.zeros((9, 16), np.float32)], repeat=2) == [0.25e-3] * 2
    assert len(fake.records) == 2 * len(symbolic[0].plan.launches)
    # main_kernel12 (arena, input:0, output:0): each pointer then its size
    assert fake.records[-1][2][1::2] == [256 * 9, 9, 9]


def test_a_graph_of_a_symbolic_plan_is_refused_before_the_driver(
    symbolic: Any, fake: FakeDriver
) -> None:
    with pytest.raises(EmberError, match="graph=True: a CUDA graph replays fixed grids"):
        _symbolic_model(symbolic, graph=True)
    assert fake.calls == []


def test_the_cuda_target_loads_a_symbolic_model_for_every_size(fake: FakeDriver) -> None:
    model = target_named("cuda").compile(import_onnx(_symbolic_mlp()), CompileReport(), Options())
    assert isinstance(model, CudaModel) and model.symbolic
    for n in (2, 6):
        assert model.run({"input": np.ones((n, 16), np.float32)})[0].shape == (n, 8)
    assert len(fake.records) == 2 * len(model.plan.launches)


# -- on a GPU ------------------------------------------------------------------------------

needs_gpu = pytest.mark.skipif(cuda_available() is not None, reason=str(cuda_available()))


@needs_gpu
@pytest.mark.parametrize("graph", [False, True])
def test_on_the_gpu_the_program_matches_numpy(parts: Any, graph: bool) -> None:
    with construct(parts, graph=graph, synchronous=not graph) as model:
        for seed in (1, 2):
            x, _ = data(seed)
            [y] = model(x)
            np.testing.assert_allclose(y, expected(x, data()[1]), rtol=1e-6)
        assert len(model.launch_times([x], repeat=3)) == 3
