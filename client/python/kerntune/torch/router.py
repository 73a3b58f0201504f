"""kerntune.torch.enable: torch's matrix products and attention routed to tuned kernels.

Each call is mapped onto a problem (problems.py). The first time a problem is met on a GPU, its
route is resolved once: the answer's source (a daemon or a bundle) says whether kerntune's kernel
is the answer; if it is, the cubin is loaded into the device's primary context, its scratch
buffers are allocated and zeroed, and the first call is run both ways: the kernel's result is
checked against an fp32 reference within the family's tolerance (checks.py) and, unless told
not to, both are timed interleaved on this GPU, so that the kernel is used only where it is
correct and faster than torch's own op here. Every other call of a problem routed to us launches
the kernel on torch's current stream, allocating only the output (from torch's caching
allocator), so CUDA graphs capture it. Everything else, and anything that fails, runs as torch's
own op; `Router.report()` says what went where and why.
"""

from __future__ import annotations

import statistics
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch
from torch.overrides import TorchFunctionMode

from .. import launch as kt_launch
from . import checks, cublaslt, problems, state
from .sources import Answer

# The buffer each family's op returns; its other outputs (attention's LSE) are allocated per call.
RESULT_BUFFER = {"gemm": "C", "attention_fwd": "O", "dual_gemm_silu": "C"}
TORCH_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "f32": torch.float32, "fp32": torch.float32,
                "u32": torch.int32, "i32": torch.int32, "i64": torch.int64, "u8": torch.uint8}
TMA_ALIGNMENT = 16  # bytes: a tensor map's global address


@dataclass
class Route:
    """How one problem runs on one GPU: ours (kernel set) or torch's (reason says why)."""

    problem: problems.Problem
    device: int
    ours: bool = False
    reason: str = ""
    kernel: Optional[kt_launch.LoadedKernel] = None
    answer: Optional[Answer] = None
    scratch_buffers: List[kt_launch.Buffer] = field(default_factory=list)
    # Per stream: launches on two streams at once must not share a split-K workspace.
    scratch: Dict[int, Dict[str, Any]] = field(default_factory=dict)
    outputs: List[kt_launch.Buffer] = field(default_factory=list)
    checked: bool = False
    calls_ours: int = 0
    calls_torch: int = 0
    timing: Optional[Dict[str, float]] = None
    error: Optional[Dict[str, float]] = None
    # Where the baseline won a gemm: the job's cublasLt algorithm, called instead of a kernel of
    # ours (`ours` then means routed: checked and timed like a kernel), and its workspace.
    library: Any = None
    workspaces: Dict[int, Any] = field(default_factory=dict)  # per stream, as the scratch buffers

    @property
    def name(self) -> str:
        """"ours", "cublaslt" (the job's algorithm) or "torch"."""
        return ("cublaslt" if self.library is not None else "ours") if self.ours else "torch"

    def fall_back(self, reason: str) -> None:
        self.ours, self.reason = False, reason
        self.release()

    def release(self) -> None:
        """Unloads the kernel or library call and frees the route's buffers."""
        if self.kernel is not None:
            self.kernel.close()
            self.kernel = None
        if self.library is not None:
            self.library.close()
            self.library = None
        self.workspaces.clear()
        self.scratch.clear()


# A spin kernel before each timed batch keeps the GPU busy while the CPU enqueues the batch, so
# the events time the kernels alone, not the Python launch path or torch's dispatch (what a CUDA
# graph replays, and what a GPU-bound model waits on).
SPIN_CYCLES = 2_000_000
CALLS_PER_SAMPLE = 5


def median_interleaved_us(runs: Dict[str, Callable[[], Any]], rounds: int) -> Dict[str, float]:
    """Median GPU time per call of each callable in microseconds, timed in rounds (a b a b ...)
    on the current stream with CUDA events around CALLS_PER_SAMPLE calls queued behind a spin
    kernel, after two warm-up calls of each."""
    spin = getattr(torch.cuda, "_sleep", None)
    for run in runs.values():
        run()
        run()
    samples: Dict[str, List[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            if spin is not None:
                spin(SPIN_CYCLES)
            start.record()
            for _ in range(CALLS_PER_SAMPLE):
                run()
            end.record()
            end.synchronize()
            samples[name].append(start.elapsed_time(end) * 1e3 / CALLS_PER_SAMPLE)
    return {name: statistics.median(values) for name, values in samples.items()}


class Router(TorchFunctionMode):
    """The mode `kerntune.torch.enable` returns. Use it as a context manager, or call
    `enable(...)` without `with` and `disable()` when done."""

    def __init__(self, source: Any, *, check_speed: bool = True, timing_rounds: int = 15, verbose: bool = False):
        super().__init__()
        self.source = source
        self.check_speed = check_speed
        self.timing_rounds = timing_rounds
        self.verbose = verbose
        self.routes: Dict[Tuple[Any, int], Route] = {}
        self.untouched: Dict[Tuple[Any, ...], Tuple[problems.Problem, str, int]] = {}
        self._local = threading.local()  # each thread's own depth of suspension
        self._warned: set = set()
        self._lock = threading.Lock()  # routes are resolved once, whichever thread meets them first
        self._driver_version: Optional[int] = None
        self.entered = False

    @property
    def suspended(self) -> int:
        """> 0 while this thread runs a routed call's own work (torch's op, the reference)."""
        return getattr(self._local, "depth", 0)

    @suspended.setter
    def suspended(self, depth: int) -> None:
        self._local.depth = depth

    # ---- the mode ----
    def __enter__(self) -> "Router":
        state.push(self)
        super().__enter__()
        self.entered = True
        return self

    def __exit__(self, *exc: Any) -> None:
        self.entered = False
        super().__exit__(*exc)
        state.pop(self)

    def close(self) -> None:
        """Leaves the mode (if entered) and unloads every kernel."""
        if self.entered:
            self.__exit__(None, None, None)
        for route in self.routes.values():
            route.release()

    def __torch_function__(self, func: Any, types: Any, args: Tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        call = None if self.suspended else problems.call_of(func, args, kwargs)
        if call is None:
            return func(*args, **kwargs)
        return self.run(call, lambda: func(*args, **kwargs))

    # ---- routing ----
    def run(self, call: problems.Call, torch_op: Callable[[], Any]) -> Any:
        """The call's result: our kernel's where its route says so, torch_op's otherwise. Nothing
        it runs (torch's op, the check's reference) is routed again."""
        self.suspended += 1
        try:
            return self._run(call, torch_op)
        finally:
            self.suspended -= 1

    def _run(self, call: problems.Call, torch_op: Callable[[], Any]) -> Any:
        reason = self._unroutable(call)
        if reason:
            self._count_untouched(call.problem, reason)
            return torch_op()
        device = next(iter(call.inputs.values())).device.index or 0
        route = self._route(call.problem, device)
        if route.ours and not route.checked:
            if torch.cuda.is_current_stream_capturing():
                self._warn_once(("capture", route.problem.key),
                                f"kerntune: {route.problem.describe()} met first inside a CUDA graph capture; it "
                                "runs as torch's op there (run the model once before capturing)")
                route.calls_torch += 1
                return torch_op()
            return self._first_call(route, call, torch_op)
        if not route.ours:
            route.calls_torch += 1
            return torch_op()
        route.calls_ours += 1
        return self._launch(route, call)

    def _unroutable(self, call: problems.Call) -> Optional[str]:
        problem = call.problem
        if not problem.supported:
            return problem.reason or "not a family's layout"
        tensors = list(call.inputs.values()) + ([call.bias] if call.bias is not None else [])
        if not all(t.is_cuda for t in tensors):
            return "CPU tensors"
        if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
            return "autograd: kerntune's kernels have no backward (run under torch.no_grad() or inference_mode())"
        if any(t.data_ptr() % TMA_ALIGNMENT for t in call.inputs.values()):
            return "an operand not 16-byte aligned (a sliced view)"
        return None

    def _count_untouched(self, problem: problems.Problem, reason: str) -> None:
        entry = self.untouched.get(problem.key)
        self.untouched[problem.key] = (problem, reason, (entry[2] if entry else 0) + 1)

    def _warn_once(self, key: Any, text: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(text, stacklevel=4)

    def _route(self, problem: problems.Problem, device: int) -> Route:
        route = self.routes.get((problem.key, device))
        if route is not None:
            return route
        with self._lock:  # published only once resolved: other threads read the dict unlocked
            route = self.routes.get((problem.key, device))
            if route is None:
                route = self.routes[(problem.key, device)] = self._resolve(problem, device)
            return route

    def _resolve(self, problem: problems.Problem, device: int) -> Route:
        route = Route(problem, device)
        if self._driver_version is None:
            try:
                self._driver_version = kt_launch.driver().version()
            except (OSError, kt_launch.CudaError):
                self._driver_version = None
        try:
            answer = self.source.answer(problem, torch.cuda.get_device_name(device), self._driver_version)
        except Exception as error:  # a source that breaks must not break the model: torch's op runs
            answer = Answer(False, f"{type(error).__name__}: {error}")
        route.answer = answer
        if not answer.ours:
            route.fall_back(answer.reason)
            self._library_route(route, answer, device)
            if self.verbose:
                print(f"kerntune: {problem.describe()}: {route.name} ({route.reason})")
            return route
        try:
            spec = kt_launch.launch_spec_from_launch(answer.launch or {})
            self._check_buffers(problem, spec)
            route.kernel = kt_launch.LoadedKernel(spec, answer.cubin or b"", device)
        except (ValueError, KeyError, kt_launch.CudaError, OSError) as error:
            route.fall_back(f"cannot load variant {answer.variant_id}: {error}")
            self._warn_once(("load", problem.key), f"kerntune: {problem.describe()}: {route.reason}; torch's op runs")
            return route
        route.ours, route.reason = True, answer.reason
        for buffer in spec.buffer_list():
            if buffer.role == "scratch":
                route.scratch_buffers.append(buffer)
            elif buffer.role == "output":
                route.outputs.append(buffer)
        return route

    @staticmethod
    def _scratch(route: Route, stream: int, device: Any) -> Dict[str, Any]:
        """The route's scratch buffers for this stream, zeroed at their first use: the kernels
        leave them as they found them."""
        buffers = route.scratch.get(stream)
        if buffers is None:
            buffers = route.scratch[stream] = {
                b.name: torch.zeros(b.nbytes, dtype=torch.uint8, device=device) for b in route.scratch_buffers}
        return buffers

    @staticmethod
    def _library_route(route: Route, answer: Answer, device: int) -> None:
        """Where cublasLt won a gemm: the algorithm its job measured, if this cuBLAS offers it."""
        baseline = answer.baseline or {}
        if route.problem.family != "gemm" or baseline.get("kind") != "cublaslt_gemm":
            return
        shape = route.problem.shape_dict
        try:
            route.library = cublaslt.JobAlgorithm(shape["M"], shape["N"], shape["K"], route.problem.dtype, baseline["config"])
        except (OSError, ValueError, RuntimeError) as error:
            route.reason += f"; torch's op runs (the job's cublasLt algorithm cannot: {error})"
            return
        route.ours = True
        route.reason += "; the job's cublasLt algorithm runs"

    @staticmethod
    def _check_buffers(problem: problems.Problem, spec: kt_launch.LaunchSpec) -> None:
        if RESULT_BUFFER.get(problem.family) not in spec.buffers:
            raise ValueError(f"the launch names no {RESULT_BUFFER.get(problem.family)} buffer")

    @staticmethod
    def _sizes_match(route: Route, call: problems.Call) -> Optional[str]:
        """Why the launch description is not for this very call's tensors, or None."""
        if route.kernel is None:
            return None  # the library call is made for the problem's own shape
        sizes = route.kernel.spec.buffers
        for name, tensor in call.inputs.items():
            if name not in sizes or sizes[name][1] != tensor.numel():
                return f"the launch sizes {name} as {sizes.get(name)}, the call passes {tensor.numel()} elements"
        return None

    def _launch(self, route: Route, call: problems.Call) -> Any:
        first = next(iter(call.inputs.values()))
        stream = torch.cuda.current_stream(first.device).cuda_stream
        if route.library is not None:
            workspace = route.workspaces.get(stream)
            if workspace is None:
                workspace = route.workspaces[stream] = torch.empty(cublaslt.WORKSPACE_BYTES, dtype=torch.uint8,
                                                                   device=first.device)
            result = torch.empty(call.out_shape, dtype=first.dtype, device=first.device)
            route.library(call.inputs["A"].data_ptr(), call.inputs["B"].data_ptr(), result.data_ptr(),
                          workspace.data_ptr(), stream)
            if call.bias is not None:
                result.add_(call.bias)
            return result
        assert route.kernel is not None
        addresses = {name: t.data_ptr() for name, t in call.inputs.items()}
        result = None
        keep = []
        for buffer in route.outputs:
            if buffer.name == RESULT_BUFFER[call.problem.family]:
                result = torch.empty(call.out_shape, dtype=first.dtype, device=first.device)
                tensor = result
            else:
                tensor = torch.empty(buffer.elements, dtype=TORCH_DTYPES.get(buffer.dtype, torch.float32),
                                     device=first.device)
                keep.append(tensor)
            addresses[buffer.name] = tensor.data_ptr()
        for name, tensor in self._scratch(route, stream, first.device).items():
            addresses[name] = tensor.data_ptr()
        route.kernel.launch(addresses, stream)
        if call.bias is not None:
            result.add_(call.bias)
        return result

    def _first_call(self, route: Route, call: problems.Call, torch_op: Callable[[], Any]) -> Any:
        """Checks the kernel's first result, then (check_speed) times it against torch's op."""
        route.checked = True
        expected = torch_op()
        mismatch = self._sizes_match(route, call)
        if mismatch:
            route.fall_back(mismatch)
            self._warn_once(("sizes", route.problem.key), f"kerntune: {route.problem.describe()}: {mismatch}")
            return expected
        try:
            got = self._launch(route, call)
            torch.cuda.synchronize(route.device)
        except (kt_launch.CudaError, RuntimeError) as error:
            route.fall_back(f"the launch failed: {error}")
            self._warn_once(("launch", route.problem.key), f"kerntune: {route.problem.describe()}: {route.reason}")
            return expected
        tolerance = (route.answer.tolerance if route.answer else None) or {}
        verdict = checks.check(call.problem.family, call.problem.dtype, tolerance, call.inputs,
                               call.problem.shape_dict, got, call.bias)
        route.error = {"max_abs": verdict.max_abs, "rel_l2": verdict.rel_l2}
        if not verdict.ok:
            route.fall_back(f"wrong result on the first call: {verdict.reason}")
            self._warn_once(("wrong", route.problem.key),
                            f"kerntune: {route.problem.describe()}: {route.reason}; this shape runs as torch's op")
            return expected
        if self.check_speed:
            times = median_interleaved_us({"ours": lambda: self._launch(route, call),
                                           "torch": lambda: torch_op()}, self.timing_rounds)
            route.timing = times
            if times["ours"] >= times["torch"]:
                route.fall_back(f"torch's op is as fast here ({times['torch']:.1f} us, ours {times['ours']:.1f} us)")
                return expected
        route.calls_ours += 1
        if self.verbose:
            print(f"kerntune: {route.problem.describe()}: ours ({route.reason})")
        return got

    # ---- what happened ----
    def report(self) -> List[Dict[str, Any]]:
        """One entry per problem met: where it ran (ours or torch), why, how often, and, for a
        routed one, its first-call error and timing."""
        rows = []
        for route in self.routes.values():
            rows.append({"problem": route.problem.describe(), "family": route.problem.family,
                         "shape": route.problem.shape_dict, "dtype": route.problem.dtype,
                         "route": route.name, "reason": route.reason,
                         "calls_ours": route.calls_ours, "calls_torch": route.calls_torch,
                         "first_call_us": route.timing, "first_call_error": route.error,
                         "answer": route.answer.detail if route.answer else None})
        for problem, reason, calls in self.untouched.values():
            rows.append({"problem": problem.describe(), "family": problem.family, "shape": problem.shape_dict,
                         "dtype": problem.dtype, "route": "torch", "reason": reason, "calls_ours": 0,
                         "calls_torch": calls, "first_call_us": None, "first_call_error": None, "answer": None})
        return rows
