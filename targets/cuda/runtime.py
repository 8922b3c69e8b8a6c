"""Run a model compiled for the GPU through CUDA's driver API (`cuda-bindings`).

`CudaModel(inputs, outputs, ptx, plan, weights)` is a compiled model
(`targets/calls.py`'s contract: `model(x, y)`, `model.run({...})`, a list
of NumPy arrays back) that runs `plan` (`launch_plan.py`) on one GPU:

- construction: checks the plan against the PTX and the model (every
  kernel an `.entry` of the PTX with one 64-bit parameter per argument, as
  `convert-gpu-to-nvvm` passes a static memref: one `ptr addrspace(1)`;
  every role one of `input:I`, `output:I`, `weights`, `arena`; the blob
  `plan.weights_bytes` long), then initialises the driver, makes the
  primary context of device `device` current (the driver numbers only the
  devices `CUDA_VISIBLE_DEVICES` shows, so device 0 is its first), checks
  the device's compute capability against the PTX's `.target`, loads the
  PTX (the driver compiles it for the device), finds every kernel, creates
  one stream, allocates one device buffer per input and output, the
  weights (uploaded once) and the arena (each at least 1 byte; the arena
  and the outputs zeroed once), and packs each launch's parameters: the
  buffers never move, so neither do the parameters.
- a call: copies the inputs to the device, launches every kernel of the
  plan in order on the stream, copies the outputs back into new arrays and
  synchronises. With `graph=True` the launch sequence is captured once into
  a CUDA graph at construction and each call replays it (the copies stay
  outside the graph: the host arrays change from call to call).
- `launch_times(arrays, repeat)`: the device time of the launch sequence
  alone (CUDA events), the inputs uploaded once, for benchmarks that
  compare kernels rather than PCIe copies.
- `close()` (also `with`, and `__del__` as a last resort) releases every
  device buffer, the module, the stream, the graph and the context.

Errors: without cuda-bindings, or without a driver or GPU, construction
raises `CudaUnavailable` (one line saying what to do); a failed driver call
raises `CudaError` naming the call and its kernel or buffer. Kernels run
asynchronously, so a fault inside one surfaces at the next synchronisation:
with `synchronous=True` every launch is followed by one, and the error
names the kernel that faulted.

A model owns one set of device buffers and one stream: calls from several
threads at once must be serialised by the caller (each call makes the
model's context current on its thread, so one thread after another is fine).

`cuda_available()` is None where a GPU can be used, else the reason.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import numpy as np

from ember.targets.calls import CheckedCalls, TensorSpec, check_count
from ember.targets.cuda.errors import CudaError, CudaUnavailable, LaunchPlanMismatch
from ember.targets.cuda.launch_plan import Launch, LaunchPlan

INSTALL = "pip install -e '.[cuda]'"
NO_DEVICE_HINT = "run with --emulate to run the kernels on this CPU"
POINTER_PARAMETER = "u64"
"""The PTX type of a kernel parameter that is a device pointer (nvptx64)."""

_ENTRY = re.compile(r"\.entry\s+([\w$.]+)\s*\(([^)]*)\)")
_PARAMETER = re.compile(r"\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)")
_TARGET = re.compile(r"^\s*\.target\s+sm_(\d+)([af]?)\b", re.MULTILINE)
_VERSION = re.compile(r"^\s*\.version\s+(\d+\.\d+)", re.MULTILINE)
_ROLE = re.compile(r"(input|output):(\d+)|weights|arena")


def load_driver() -> Any:
    """`cuda.bindings.driver`, or `CudaUnavailable` saying how to install it."""
    try:
        from cuda.bindings import driver
    except ImportError:
        raise CudaUnavailable(
            f"running on the GPU needs cuda-bindings: {INSTALL} (its 13.x needs a CUDA 13 "
            "driver, 12.x a CUDA 12 one: see nvidia-smi's 'CUDA Version'); or run with "
            "--emulate to run the kernels on this CPU"
        ) from None
    return driver


def _error_name(result: Any) -> str:
    return str(getattr(result, "name", result))


def initialize(driver: Any) -> None:
    """`cuInit(0)`, or `CudaUnavailable` when there is no driver or GPU (the
    driver library missing raises rather than returning an error code)."""
    try:
        (result,) = driver.cuInit(0)
    except Exception as error:  # cuda.pathfinder's "library not found"
        reason = type(error).__name__
    else:
        if result == driver.CUresult.CUDA_SUCCESS:
            return
        reason = _error_name(result)
    raise CudaUnavailable(f"no CUDA driver/GPU available (cuInit: {reason}); {NO_DEVICE_HINT}")


def cuda_available() -> str | None:
    """None when CUDA can run kernels here (cuda-bindings installed, the
    driver initialises, at least one device), else the one-line reason."""
    try:
        driver = load_driver()
        initialize(driver)
    except CudaUnavailable as error:
        return str(error)
    result, count = driver.cuDeviceGetCount()
    if result != driver.CUresult.CUDA_SUCCESS or count < 1:
        return (
            f"no CUDA device (cuDeviceGetCount: {_error_name(result)}, {count}); {NO_DEVICE_HINT}"
        )
    return None


# -- the plan against its PTX and its model (no driver needed) ----------------------------


def entry_parameters(ptx: str) -> dict[str, list[str]]:
    """Each `.entry` of `ptx` and the PTX types of its parameters, in order
    (`u64` for a pointer or an i64)."""
    return {name: _PARAMETER.findall(parameters) for name, parameters in _ENTRY.findall(ptx)}


def check_plan(plan: LaunchPlan, ptx: str, inputs: int, outputs: int, weights_bytes: int) -> None:
    """`LaunchPlanMismatch` unless every launch of `plan` fits `ptx` (its
    kernel an entry taking one 64-bit pointer per argument) and a model of
    `inputs` inputs, `outputs` outputs and a weights blob of `weights_bytes`."""
    entries = entry_parameters(ptx)
    counts = {"input": inputs, "output": outputs}
    for launch in plan.launches:
        if launch.kernel not in entries:
            known = ", ".join(sorted(entries)) or "none"
            raise LaunchPlanMismatch(
                f"the launch plan runs kernel {launch.kernel!r}, which the PTX lacks (it has: {known})"
            )
        parameters = entries[launch.kernel]
        if parameters != [POINTER_PARAMETER] * len(launch.arguments):
            raise LaunchPlanMismatch(
                f"kernel {launch.kernel!r} takes parameters {parameters} in the PTX, the plan "
                f"passes {len(launch.arguments)} device pointers ({', '.join(launch.arguments)})"
            )
        for role in launch.arguments:
            matched = _ROLE.fullmatch(role)
            if matched is None or (
                matched.group(1) and int(matched.group(2)) >= counts[matched.group(1)]
            ):
                raise LaunchPlanMismatch(
                    f"kernel {launch.kernel!r}: argument {role!r} is not one of the model's "
                    f"(input:0..{inputs - 1}, output:0..{outputs - 1}, weights, arena)"
                )
    if weights_bytes != plan.weights_bytes:
        raise LaunchPlanMismatch(
            f"the weights blob has {weights_bytes} bytes, the launch plan {plan.weights_bytes}"
        )


def ptx_target(ptx: str) -> tuple[int, str]:
    """The compute capability the PTX targets (`sm_90a` is (90, "a"))."""
    found = _TARGET.search(ptx)
    if found is None:
        raise LaunchPlanMismatch("the PTX has no `.target sm_NN` line")
    return int(found.group(1)), found.group(2)


# -- the driver, one checked call at a time -----------------------------------------------


class _Driver:
    """`cuda.bindings.driver` whose calls raise `CudaError` (naming the call
    and what it was for) instead of returning an error code."""

    def __init__(self, module: Any):
        self.module = module

    def __call__(self, call: str, *arguments: Any, what: str) -> Any:
        result, *values = getattr(self.module, call)(*arguments)
        if result != self.module.CUresult.CUDA_SUCCESS:
            raise CudaError(f"{call} ({what}) failed: {self.describe(result)}")
        return values[0] if len(values) == 1 else tuple(values) if values else None

    def describe(self, result: Any) -> str:
        name = _error_name(result)
        try:
            described, text = self.module.cuGetErrorString(result)
        except Exception:  # describing an error must not raise another
            return name
        if described != self.module.CUresult.CUDA_SUCCESS or not text:
            return name
        return f"{name}: {text.decode() if isinstance(text, bytes) else text}"


@dataclass(frozen=True)
class _PreparedLaunch:
    """A launch with its function and its packed parameters: `values` holds
    the device pointers, `pointers` the address of each (`kernelParams`)."""

    launch: Launch
    function: Any
    values: np.ndarray
    pointers: np.ndarray

    @property
    def kernel_params(self) -> int:
        return int(self.pointers.ctypes.data) if len(self.values) else 0


def _pack(launch: Launch, function: Any, buffers: dict[str, int]) -> _PreparedLaunch:
    values = np.array([buffers[role] for role in launch.arguments], dtype=np.uint64)
    base = int(values.ctypes.data)
    pointers = np.array([base + 8 * i for i in range(len(values))], dtype=np.uint64)
    return _PreparedLaunch(launch, function, values, pointers)


def _nbytes(spec: TensorSpec) -> int:
    return int(np.prod(spec.shape, dtype=np.int64)) * spec.dtype.itemsize


class CudaModel(CheckedCalls):
    """A model compiled for the GPU, run through CUDA's driver API (see the
    module docstring for what construction, a call and `close` do).

    `inputs`/`outputs`: the model's tensors in order (`input:I` and
    `output:I` of the plan); `ptx`: the kernels (`ptx_of`); `plan`: the
    launches; `weights`: the blob (uint8 or int8, `plan.weights_bytes`
    long); `device`: the driver's ordinal; `graph`: replay the launches as
    one CUDA graph; `synchronous`: synchronise after every launch."""

    def __init__(
        self,
        inputs: Sequence[TensorSpec],
        outputs: Sequence[TensorSpec],
        ptx: str,
        plan: LaunchPlan,
        weights: np.ndarray,
        *,
        device: int = 0,
        graph: bool = False,
        synchronous: bool = False,
    ):
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.plan = plan
        self.synchronous = synchronous
        self._closed = False
        self._context: Any = None
        self._module: Any = None
        self._stream: Any = None
        self._graph: Any = None
        self._graph_exec: Any = None
        self._allocations: list[Any] = []
        self._launches: list[_PreparedLaunch] = []
        self._kernels = ", ".join(dict.fromkeys(launch.kernel for launch in plan.launches))
        blob = np.ascontiguousarray(weights).view(np.uint8).reshape(-1)
        module = load_driver()
        check_plan(plan, ptx, len(self.inputs), len(self.outputs), blob.nbytes)
        initialize(module)
        self._cuda = _Driver(module)
        self._device = self._cuda("cuDeviceGet", device, what=f"device {device}")
        try:
            self._set_up(ptx, blob, device, graph)
        except BaseException:
            self.close(raise_errors=False)
            raise

    def _set_up(self, ptx: str, blob: np.ndarray, device: int, graph: bool) -> None:
        cuda, driver = self._cuda, self._cuda.module
        self._context = cuda("cuDevicePrimaryCtxRetain", self._device, what=f"device {device}")
        cuda("cuCtxSetCurrent", self._context, what=f"device {device}")
        self._check_compute_capability(ptx, device)
        version = _VERSION.search(ptx)
        self._module = cuda(
            "cuModuleLoadData",
            ptx.encode() + b"\0",
            what=f"loading the PTX (ISA {version.group(1) if version else '?'}; a "
            "driver older than the ISA rejects it)",
        )
        functions = {
            kernel: cuda(
                "cuModuleGetFunction", self._module, kernel.encode(), what=f"kernel {kernel!r}"
            )
            for kernel in dict.fromkeys(launch.kernel for launch in self.plan.launches)
        }
        self._stream = cuda("cuStreamCreate", 0, what="the model's stream")
        buffers: dict[str, int] = {}
        for role, nbytes in (
            *((f"input:{i}", _nbytes(s)) for i, s in enumerate(self.inputs)),
            *((f"output:{i}", _nbytes(s)) for i, s in enumerate(self.outputs)),
            ("weights", self.plan.weights_bytes),
            ("arena", self.plan.arena_bytes),
        ):
            pointer = cuda("cuMemAlloc", max(1, nbytes), what=f"{nbytes} bytes for {role}")
            self._allocations.append(pointer)
            buffers[role] = int(pointer)
        self._buffers = buffers
        if blob.nbytes:
            cuda(
                "cuMemcpyHtoDAsync",
                buffers["weights"],
                int(blob.ctypes.data),
                blob.nbytes,
                self._stream,
                what="uploading the weights",
            )
        zeroed = [("arena", self.plan.arena_bytes)]
        zeroed += [(f"output:{i}", _nbytes(s)) for i, s in enumerate(self.outputs)]
        for role, nbytes in zeroed:
            if nbytes:
                cuda(
                    "cuMemsetD8Async",
                    buffers[role],
                    0,
                    nbytes,
                    self._stream,
                    what=f"zeroing {role}",
                )
        self._synchronize("uploading the weights")
        self._launches = [
            _pack(launch, functions[launch.kernel], buffers) for launch in self.plan.launches
        ]
        if graph:
            self._capture(driver)

    def _check_compute_capability(self, ptx: str, device: int) -> None:
        attribute = self._cuda.module.CUdevice_attribute
        major = self._cuda(
            "cuDeviceGetAttribute",
            attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            self._device,
            what=f"device {device}",
        )
        minor = self._cuda(
            "cuDeviceGetAttribute",
            attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
            self._device,
            what=f"device {device}",
        )
        have = 10 * major + minor
        wanted, suffix = ptx_target(ptx)
        # PTX for sm_NN runs on NN and later; sm_NNa/f only on NN itself.
        if have < wanted or (suffix and have != wanted):
            raise CudaError(
                f"the PTX targets sm_{wanted}{suffix}, device {device} is sm_{have}: compile "
                f"for arch sm_{have}"
            )

    def _capture(self, driver: Any) -> None:
        """The launch sequence as one CUDA graph (captured, not run)."""
        mode = driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
        self._cuda("cuStreamBeginCapture", self._stream, mode, what="capturing the launches")
        try:
            self._enqueue_launches(capturing=True)
        except BaseException:
            # Leave capture mode so the stream can be used (and destroyed);
            # the capture was invalidated, so there is no graph to keep.
            driver.cuStreamEndCapture(self._stream)
            raise
        self._graph = self._cuda("cuStreamEndCapture", self._stream, what="capturing the launches")
        self._graph_exec = self._cuda(
            "cuGraphInstantiate", self._graph, 0, what=f"the graph of kernels {self._kernels}"
        )

    # -- running ---------------------------------------------------------------------------

    def _enqueue_launches(self, capturing: bool = False) -> None:
        for prepared in self._launches:
            launch = prepared.launch
            self._cuda(
                "cuLaunchKernel",
                prepared.function,
                *launch.grid,
                *launch.block,
                0,
                self._stream,
                prepared.kernel_params,
                0,
                what=f"kernel {launch.kernel!r}, grid {launch.grid}, block {launch.block}",
            )
            if self.synchronous and not capturing:
                self._synchronize(f"kernel {launch.kernel!r}")

    def _run_launches(self) -> None:
        if self._graph_exec is not None:
            self._cuda(
                "cuGraphLaunch",
                self._graph_exec,
                self._stream,
                what=f"the graph of kernels {self._kernels}",
            )
        else:
            self._enqueue_launches()

    def _synchronize(self, after: str) -> None:
        self._cuda("cuStreamSynchronize", self._stream, what=f"after {after}")

    def _upload_inputs(self, arrays: Sequence[np.ndarray]) -> None:
        for i, (spec, array) in enumerate(zip(self.inputs, arrays, strict=True)):
            if array.nbytes:
                self._cuda(
                    "cuMemcpyHtoDAsync",
                    self._buffers[f"input:{i}"],
                    int(array.ctypes.data),
                    array.nbytes,
                    self._stream,
                    what=f"input {spec.describe()}",
                )

    def _enter(self) -> None:
        if self._closed:
            raise CudaError("the model was closed")
        self._cuda("cuCtxSetCurrent", self._context, what="the model's context")

    def _execute(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        self._enter()
        self._upload_inputs(arrays)
        self._run_launches()
        results = [np.empty(spec.shape, spec.dtype) for spec in self.outputs]
        for i, (spec, result) in enumerate(zip(self.outputs, results, strict=True)):
            if result.nbytes:
                self._cuda(
                    "cuMemcpyDtoHAsync",
                    int(result.ctypes.data),
                    self._buffers[f"output:{i}"],
                    result.nbytes,
                    self._stream,
                    what=f"output {spec.describe()}",
                )
        self._synchronize(f"kernels {self._kernels}")
        return results

    def launch_times(self, arrays: Sequence[np.ndarray], repeat: int) -> list[float]:
        """Seconds of device time for each of `repeat` runs of the launch
        sequence (CUDA events around it), the inputs uploaded once before."""
        check_count(self.inputs, arrays)
        check = [self._checked(spec, a) for spec, a in zip(self.inputs, arrays)]
        self._enter()
        self._upload_inputs(check)
        start = self._cuda("cuEventCreate", 0, what="timing")
        end = self._cuda("cuEventCreate", 0, what="timing")
        times = []
        try:
            for _ in range(repeat):
                self._cuda("cuEventRecord", start, self._stream, what="timing")
                self._run_launches()
                self._cuda("cuEventRecord", end, self._stream, what="timing")
                self._cuda("cuEventSynchronize", end, what=f"after kernels {self._kernels}")
                times.append(self._cuda("cuEventElapsedTime", start, end, what="timing") / 1e3)
        finally:
            for event in (start, end):
                self._cuda.module.cuEventDestroy(event)
        return times

    # -- releasing -------------------------------------------------------------------------

    def close(self, raise_errors: bool = True) -> None:
        """Release the device buffers, graph, module, stream and context
        (once; later calls do nothing). Every release is attempted; the first
        failure is raised afterwards when `raise_errors`."""
        if self._closed or not hasattr(self, "_cuda"):
            self._closed = True
            return
        self._closed = True
        driver = self._cuda.module
        failures: list[str] = []

        def release(call: str, handle: Any) -> None:
            if handle is None:
                return
            try:
                (result,) = getattr(driver, call)(handle)
            except Exception as error:  # keep releasing the rest
                failures.append(f"{call}: {error}")
                return
            if result != driver.CUresult.CUDA_SUCCESS:
                failures.append(f"{call}: {_error_name(result)}")

        if self._context is not None:
            release("cuCtxSetCurrent", self._context)
            release("cuStreamSynchronize", self._stream)
        release("cuGraphExecDestroy", self._graph_exec)
        release("cuGraphDestroy", self._graph)
        for pointer in self._allocations:
            release("cuMemFree", pointer)
        release("cuModuleUnload", self._module)
        release("cuStreamDestroy", self._stream)
        if self._context is not None:
            release("cuDevicePrimaryCtxRelease", self._device)
        self._allocations = []
        self._launches = []
        self._graph_exec = self._graph = self._module = self._stream = self._context = None
        if failures and raise_errors:
            raise CudaError(f"releasing the model's CUDA resources: {'; '.join(failures)}")

    def __enter__(self) -> CudaModel:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close(raise_errors=False)
        except Exception:  # the interpreter may be shutting down
            pass


__all__ = [
    "CudaModel",
    "check_plan",
    "cuda_available",
    "entry_parameters",
    "initialize",
    "load_driver",
    "ptx_target",
]
