"""Run a model compiled for the GPU through CUDA's driver API (`cuda-bindings`).

`CudaModel(inputs, outputs, ptx, plan, weights, ranges=...)` is a compiled
model (`targets/calls.py`'s contract: `model(x, y)`, `model.run({...})`, a
list of NumPy arrays back) that runs `plan` (`launch_plan.py`) on one GPU.
Its inputs and outputs are `InputSpec`s: `TensorSpec`s for a static model,
`SymbolicSpec`s (dims over symbols such as `N`, their `ranges` given) for
one compiled once for every size, whose plan's grids, buffer sizes and
arena are formulas over the symbols.

- construction: checks the plan against the PTX and the model (every
  kernel an `.entry` of the PTX whose parameters are, per argument, the
  buffer's device pointer then one u64 per size the plan's `dynamic` says
  it carries, as `convert-gpu-to-nvvm` passes a memref: a `ptr
  addrspace(1)` and an i64 per `?`; every role one of `input:I`,
  `output:I`, `weights`, `arena`; the blob `plan.weights_bytes` long),
  then initialises the driver, makes the primary context of device
  `device` current (the driver numbers only the devices
  `CUDA_VISIBLE_DEVICES` shows, so device 0 is its first), checks the
  device's compute capability against the PTX's `.target`, loads the PTX
  (the driver compiles it for the device), finds every kernel, creates one
  stream and uploads the weights once. A static model also allocates its
  inputs, outputs and arena now and packs every launch's parameters; a
  symbolic model does so at its first call.
- a call: checks the inputs (a static model: dtype and shape; a symbolic
  one: `EntryCheck` binds the symbols from the shapes, naming the input,
  axis and symbol on a mismatch), evaluates every size for that binding
  (output shapes, arena bytes, grids, the sizes each buffer's parameters
  carry), grows a device buffer whose call needs more bytes than it has (a
  new, larger allocation; a smaller call keeps the larger one), copies the
  inputs to the device, launches every kernel of the plan in order on the
  stream (a launch whose grid is empty, at a size of 0, is skipped: it has
  no thread to run), copies the outputs back into new arrays and
  synchronises. The arena and the outputs are zeroed when (re)allocated.
  Parameters are packed once per binding and kept for the last
  `BINDINGS_KEPT` bindings while no buffer moves (a growth repacks).
- `graph=True` (static plans only): the launch sequence is captured once
  into a CUDA graph at construction and each call replays it (the copies
  stay outside the graph: the host arrays change from call to call). A
  graph fixes grids and parameters, so a symbolic plan with `graph=True`
  is an `EmberError` at construction, before the driver is touched:
  specialise the model (`specialize=`) for graphs.
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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import numpy as np

from ember.dialects.graph.symbolic import Range, SymExpr
from ember.errors import EmberError
from ember.targets.calls import InputError, InputSpec, as_array, check_count, in_order
from ember.targets.cuda.errors import CudaError, CudaUnavailable, LaunchPlanMismatch
from ember.targets.cuda.launch_plan import BoundPlan, Launch, LaunchPlan, evaluated
from ember.targets.versions import EntryCheck, Sizes

INSTALL = "pip install -e '.[cuda]'"
NO_DEVICE_HINT = "run with --emulate to run the kernels on this CPU"
POINTER_PARAMETER = "u64"
"""The PTX type of a kernel parameter that is a device pointer (nvptx64)."""
SIZE_PARAMETER = "u64"
"""The PTX type of a kernel parameter that is one size of a buffer (an i64)."""
BINDINGS_KEPT = 16
"""How many bindings of the symbols keep their packed parameters."""

_ENTRY = re.compile(r"\.entry\s+([\w$.]+)\s*\(([^)]*)\)")
_PARAMETER = re.compile(r"\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)(\s+\.ptr\b)?")
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


def _entries(ptx: str) -> dict[str, list[tuple[str, bool]]]:
    """Each `.entry` of `ptx` and, per parameter in order, its PTX type and
    whether it is marked a pointer (`.ptr`)."""
    return {name: [(kind, bool(pointer)) for kind, pointer in _PARAMETER.findall(parameters)]
            for name, parameters in _ENTRY.findall(ptx)}  # fmt: skip


def entry_parameters(ptx: str) -> dict[str, list[str]]:
    """Each `.entry` of `ptx` and the PTX types of its parameters, in order
    (`u64` for a pointer or an i64)."""
    return {name: [kind for kind, _ in found] for name, found in _entries(ptx).items()}


def _layout(plan: LaunchPlan, launch: Launch) -> str:
    """What the plan passes a launch's kernel, argument by argument."""

    def one(role: str) -> str:
        sizes = len(plan.passed(role))
        return f"{role}: pointer" + (f" + {sizes} size{'s' * (sizes > 1)}" if sizes else "")

    return ", ".join(one(role) for role in launch.arguments)


def check_plan(plan: LaunchPlan, ptx: str, inputs: int, outputs: int, weights_bytes: int) -> None:
    """`LaunchPlanMismatch` unless `plan` fits `ptx` and a model of `inputs`
    inputs, `outputs` outputs and a weights blob of `weights_bytes`: every
    argument of every launch one of the model's roles, every kernel an entry
    of the PTX whose parameters are, argument by argument, one u64 pointer
    then one u64 per size `plan.dynamic` says the argument's buffer carries
    (a parameter the PTX marks `.ptr` is never taken for a size), and every
    such size an axis of the buffer's dims (`plan.buffers`)."""
    entries = _entries(ptx)
    counts = {"input": inputs, "output": outputs}
    for role, axes in plan.dynamic.items():
        rank = len(plan.buffers.get(role, ()))
        if any(axis >= rank for axis in axes):
            raise LaunchPlanMismatch(
                f"buffer {role!r}: the plan passes the sizes of its axes {list(axes)}, but gives "
                f"it {rank} dims"
            )
    for launch in plan.launches:
        if launch.kernel not in entries:
            known = ", ".join(sorted(entries)) or "none"
            raise LaunchPlanMismatch(
                f"the launch plan runs kernel {launch.kernel!r}, which the PTX lacks (it has: {known})"
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
        # Per parameter: its PTX type and whether it is a pointer (None: either,
        # as a pointer need not be marked `.ptr`; a size never is).
        expected: list[tuple[str, bool | None]] = [
            kind for role in launch.arguments
            for kind in [(POINTER_PARAMETER, None),
                         *[(SIZE_PARAMETER, False)] * len(plan.passed(role))]
        ]  # fmt: skip
        found = entries[launch.kernel]
        fits = len(found) == len(expected) and all(
            kind == want and pointer in (is_pointer, None)
            for (kind, is_pointer), (want, pointer) in zip(found, expected)
        )
        if not fits:
            shown = [f"{kind} .ptr" if pointer else kind for kind, pointer in found]
            raise LaunchPlanMismatch(
                f"kernel {launch.kernel!r} takes parameters {shown} in the PTX, the plan passes "
                f"{len(expected)} ({_layout(plan, launch)})"
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
    """A launch for one binding of the symbols: its function, its grid and
    its packed parameters (`values` holds, per argument, the device pointer
    then the buffer's sizes the kernel takes; `pointers` the address of
    each value: `kernelParams`)."""

    launch: Launch
    function: Any
    grid: tuple[int, int, int]
    values: np.ndarray
    pointers: np.ndarray

    @property
    def kernel_params(self) -> int:
        return int(self.pointers.ctypes.data) if len(self.values) else 0


def _pack(launch: Launch, function: Any, grid: tuple[int, int, int], buffers: Mapping[str, int],
          passed: Mapping[str, tuple[int, ...]]) -> _PreparedLaunch:  # fmt: skip
    """`launch`'s parameters: per argument, the pointer of its role's buffer
    (`buffers`), then the sizes the role's parameters carry (`passed`)."""
    values = np.array([value for role in launch.arguments
                       for value in (buffers[role], *passed.get(role, ()))], dtype=np.uint64)  # fmt: skip
    base = int(values.ctypes.data)
    pointers = np.array([base + 8 * i for i in range(len(values))], dtype=np.uint64)
    return _PreparedLaunch(launch, function, grid, values, pointers)


def _is_static(spec: InputSpec) -> bool:
    return not any(isinstance(d, SymExpr) for d in spec.dims)


class CudaModel:
    """A model compiled for the GPU, run through CUDA's driver API (see the
    module docstring for what construction, a call and `close` do).

    `inputs`/`outputs`: the model's tensors in order (`input:I` and
    `output:I` of the plan): `TensorSpec`s, or `SymbolicSpec`s whose dims
    are formulas over the symbols, each in its range of `ranges` (a symbol
    without one is any size from 0 up); `ptx`: the kernels (`ptx_of`);
    `plan`: the launches; `weights`: the blob (uint8 or int8,
    `plan.weights_bytes` long); `device`: the driver's ordinal; `graph`:
    replay the launches as one CUDA graph (static plans only);
    `synchronous`: synchronise after every launch. `symbolic` says whether
    the model's sizes depend on its inputs' shapes."""

    def __init__(
        self,
        inputs: Sequence[InputSpec],
        outputs: Sequence[InputSpec],
        ptx: str,
        plan: LaunchPlan,
        weights: np.ndarray,
        *,
        ranges: Mapping[str, Range] | None = None,
        device: int = 0,
        graph: bool = False,
        synchronous: bool = False,
    ):
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.plan = plan
        self.synchronous = synchronous
        self.symbolic = plan.symbolic or not all(map(_is_static, [*self.inputs, *self.outputs]))
        self._check = EntryCheck(self.inputs, ranges or {})
        self._closed = False
        self._context: Any = None
        self._module: Any = None
        self._stream: Any = None
        self._graph: Any = None
        self._graph_exec: Any = None
        self._allocations: dict[str, Any] = {}
        self._capacity: dict[str, int] = {}
        self._prepared: dict[Sizes, list[_PreparedLaunch]] = {}
        self._functions: dict[str, Any] = {}
        self._kernels = ", ".join(dict.fromkeys(launch.kernel for launch in plan.launches))
        if graph and self.symbolic:
            raise EmberError(
                "graph=True: a CUDA graph replays fixed grids and kernel parameters, and this "
                "plan's depend on the inputs' shapes; specialise the model (specialize=) to "
                "replay a graph per size"
            )
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
        self._functions = {
            kernel: cuda(
                "cuModuleGetFunction", self._module, kernel.encode(), what=f"kernel {kernel!r}"
            )
            for kernel in dict.fromkeys(launch.kernel for launch in self.plan.launches)
        }
        self._stream = cuda("cuStreamCreate", 0, what="the model's stream")
        self._reserve("weights", self.plan.weights_bytes)
        if blob.nbytes:
            cuda(
                "cuMemcpyHtoDAsync",
                self._pointer("weights"),
                int(blob.ctypes.data),
                blob.nbytes,
                self._stream,
                what="uploading the weights",
            )
        if not self.symbolic:  # every size known: buffers and parameters now
            self._launches_for({})
        self._synchronize("uploading the weights")
        if graph:
            self._capture(driver, self._launches_for({}))

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

    def _capture(self, driver: Any, launches: list[_PreparedLaunch]) -> None:
        """The launch sequence as one CUDA graph (captured, not run)."""
        mode = driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
        self._cuda("cuStreamBeginCapture", self._stream, mode, what="capturing the launches")
        try:
            self._enqueue_launches(launches, capturing=True)
        except BaseException:
            # Leave capture mode so the stream can be used (and destroyed);
            # the capture was invalidated, so there is no graph to keep.
            driver.cuStreamEndCapture(self._stream)
            raise
        self._graph = self._cuda("cuStreamEndCapture", self._stream, what="capturing the launches")
        self._graph_exec = self._cuda(
            "cuGraphInstantiate", self._graph, 0, what=f"the graph of kernels {self._kernels}"
        )

    # -- device buffers and parameters, per binding of the symbols --------------------------

    def _pointer(self, role: str) -> int:
        return int(self._allocations[role])

    def _reserve(self, role: str, nbytes: int, zeroed: bool = False) -> bool:
        """Makes `role`'s buffer hold at least `nbytes` (at least 1 byte),
        allocating it, or a larger one in place of a smaller (after the
        stream's work, which may read the old one); `zeroed`: a new buffer
        is zeroed. Whether the buffer moved."""
        if role in self._allocations and self._capacity[role] >= nbytes:
            return False
        what = f"{nbytes} bytes for {role}"
        if role in self._allocations:
            self._synchronize(f"the launches, before growing {role}")
            self._cuda("cuMemFree", self._allocations.pop(role), what=what)
        self._allocations[role] = self._cuda("cuMemAlloc", max(1, nbytes), what=what)
        self._capacity[role] = max(1, nbytes)
        if zeroed and nbytes:
            self._cuda("cuMemsetD8Async", self._pointer(role), 0, nbytes, self._stream,
                       what=f"zeroing {role}")  # fmt: skip
        return True

    def _shapes(self, specs: list[InputSpec], sizes: Mapping[str, int]) -> list[tuple[int, ...]]:
        return [tuple(evaluated(d, sizes) for d in spec.dims) for spec in specs]

    def _tensor_bytes(self, sizes: Mapping[str, int]) -> list[tuple[str, int, bool]]:
        """Each input's and output's role, its bytes for these sizes and
        whether its buffer is zeroed when allocated (the outputs')."""
        found = []
        for kind, specs in (("input", self.inputs), ("output", self.outputs)):
            for i, (spec, shape) in enumerate(zip(specs, self._shapes(specs, sizes))):
                nbytes = int(np.prod(shape, dtype=np.int64)) * spec.dtype.itemsize
                found.append((f"{kind}:{i}", nbytes, kind == "output"))
        return found

    def _launches_for(self, sizes: Mapping[str, int]) -> list[_PreparedLaunch]:
        """The launches for this binding of the symbols, their buffers large
        enough (grown where a call needs more) and their parameters packed
        (kept per binding until a buffer moves)."""
        key: Sizes = tuple(sorted(sizes.items()))
        if key in self._prepared:
            return self._prepared[key]
        bound: BoundPlan = self.plan.bind(sizes)
        needed = [*self._tensor_bytes(sizes), ("arena", bound.arena_bytes, True)]
        moved = [self._reserve(role, nbytes, zeroed) for role, nbytes, zeroed in needed]
        if any(moved) or len(self._prepared) >= BINDINGS_KEPT:
            self._prepared.clear()  # packed pointers of a freed buffer, or too many kept
        pointers = {role: self._pointer(role) for role in self._allocations}
        launches = [_pack(launch, self._functions[launch.kernel], grid, pointers, bound.passed)
                    for launch, grid in zip(self.plan.launches, bound.grids)]  # fmt: skip
        self._prepared[key] = launches
        return launches

    # -- running ---------------------------------------------------------------------------

    def _enqueue_launches(self, launches: list[_PreparedLaunch], capturing: bool = False) -> None:
        for prepared in launches:
            launch = prepared.launch
            if 0 in prepared.grid:  # no block to run (a size of 0); the driver rejects it
                continue
            self._cuda(
                "cuLaunchKernel",
                prepared.function,
                *prepared.grid,
                *launch.block,
                0,
                self._stream,
                prepared.kernel_params,
                0,
                what=f"kernel {launch.kernel!r}, grid {prepared.grid}, block {launch.block}",
            )
            if self.synchronous and not capturing:
                self._synchronize(f"kernel {launch.kernel!r}")

    def _run_launches(self, launches: list[_PreparedLaunch]) -> None:
        if self._graph_exec is not None:
            self._cuda(
                "cuGraphLaunch",
                self._graph_exec,
                self._stream,
                what=f"the graph of kernels {self._kernels}",
            )
        else:
            self._enqueue_launches(launches)

    def _synchronize(self, after: str) -> None:
        self._cuda("cuStreamSynchronize", self._stream, what=f"after {after}")

    def _checked(self, arrays: Sequence[Any]) -> tuple[list[np.ndarray], dict[str, int]]:
        """The inputs, checked and contiguous, and the sizes of the symbols
        they bind (an InputError before any copy on a mismatch)."""
        check_count(self.inputs, arrays)
        given = [as_array(spec, array) for spec, array in zip(self.inputs, arrays)]
        if self.symbolic:
            sizes = self._check.bind(given)
        else:
            sizes = {}
            self._check.check_types(given)
            for spec, array in zip(self.inputs, given):
                if array.shape != tuple(spec.dims):
                    raise InputError(f"input {spec.describe()}: got shape {list(array.shape)}")
        return [np.ascontiguousarray(array) for array in given], sizes

    def _upload_inputs(self, arrays: Sequence[np.ndarray]) -> None:
        for i, (spec, array) in enumerate(zip(self.inputs, arrays, strict=True)):
            if array.nbytes:
                self._cuda(
                    "cuMemcpyHtoDAsync",
                    self._pointer(f"input:{i}"),
                    int(array.ctypes.data),
                    array.nbytes,
                    self._stream,
                    what=f"input {spec.describe()}",
                )

    def _enter(self, sizes: Mapping[str, int]) -> list[_PreparedLaunch]:
        """Makes the model's context current and returns the launches for
        these sizes (see `_launches_for`)."""
        if self._closed:
            raise CudaError("the model was closed")
        self._cuda("cuCtxSetCurrent", self._context, what="the model's context")
        return self._launches_for(sizes)

    def __call__(self, *arrays: np.ndarray) -> list[np.ndarray]:
        given, sizes = self._checked(arrays)
        launches = self._enter(sizes)
        self._upload_inputs(given)
        self._run_launches(launches)
        results = [np.empty(shape, spec.dtype)
                   for spec, shape in zip(self.outputs, self._shapes(self.outputs, sizes))]  # fmt: skip
        for i, (spec, result) in enumerate(zip(self.outputs, results, strict=True)):
            if result.nbytes:
                self._cuda(
                    "cuMemcpyDtoHAsync",
                    int(result.ctypes.data),
                    self._pointer(f"output:{i}"),
                    result.nbytes,
                    self._stream,
                    what=f"output {spec.describe()}",
                )
        self._synchronize(f"kernels {self._kernels}")
        return results

    def run(self, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        """The model on inputs given by name (`targets/calls.py`'s contract)."""
        return self(*in_order(self.inputs, feeds))

    def launch_times(self, arrays: Sequence[np.ndarray], repeat: int) -> list[float]:
        """Seconds of device time for each of `repeat` runs of the launch
        sequence (CUDA events around it), the inputs uploaded once before."""
        given, sizes = self._checked(arrays)
        launches = self._enter(sizes)
        self._upload_inputs(given)
        start = self._cuda("cuEventCreate", 0, what="timing")
        end = self._cuda("cuEventCreate", 0, what="timing")
        times = []
        try:
            for _ in range(repeat):
                self._cuda("cuEventRecord", start, self._stream, what="timing")
                self._run_launches(launches)
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
        for pointer in self._allocations.values():
            release("cuMemFree", pointer)
        release("cuModuleUnload", self._module)
        release("cuStreamDestroy", self._stream)
        if self._context is not None:
            release("cuDevicePrimaryCtxRelease", self._device)
        self._allocations = {}
        self._capacity = {}
        self._prepared = {}
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
