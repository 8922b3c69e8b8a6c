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
"""

from __future__ import annotations

import ctypes
import enum
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from ember.targets.calls import InputError
from ember.targets.cuda import runtime
from ember.targets.cuda.emulator import emulate
from ember.targets.cuda.errors import CudaError, CudaUnavailable, LaunchPlanMismatch
from ember.targets.cuda.launch_plan import Launch, LaunchPlan
from ember.targets.cuda.runtime import CudaModel, check_plan, cuda_available, entry_parameters
from ember.targets.registry import target_named
from tests.support.cuda_programs import BYTES, SPECS, N, data, expected, model_parts, program


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
    calls the kernel's NumPy function, a stream capture records launches
    (their parameters copied, as the driver does) for `cuGraphLaunch`.
    `calls` lists every call's name; `fail` names a kernel whose launch fails."""

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
        ctypes.memmove(device, host, nbytes)
        return (self.ok,)

    def _cuMemcpyDtoHAsync(self, host: int, device: int, nbytes: int, stream: int) -> tuple[Any]:
        self.buffer(device, nbytes)
        ctypes.memmove(host, device, nbytes)
        return (self.ok,)

    def _cuLaunchKernel(self, handle: int, *arguments: Any) -> tuple[Any]:
        function = self.functions[handle]
        *sizes, shared, stream, params, extra = arguments
        assert (len(sizes), shared, extra) == (6, 0, 0)
        count = 3  # every kernel of the program takes three pointers
        addresses = [ctypes.c_uint64.from_address(params + 8 * i).value for i in range(count)]
        values = [ctypes.c_uint64.from_address(a).value for a in addresses]
        if self.captured is not None:
            self.captured.append((function, values))
            return (self.ok,)
        return self.run(function, values)

    def run(self, function: str, values: list[int]) -> tuple[Any]:
        self.launched.append(function)
        if function == self.fail:
            return (self.CUresult.CUDA_ERROR_LAUNCH_FAILED,)
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
