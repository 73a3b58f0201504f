#!/usr/bin/env python3
"""Times kerntune's attention_fwd candidates interleaved with PyTorch SDPA on one GPU (issue 12).

kt-bench attention tunes each shape through kerntuned, downloads each job's final-comparison
candidates (cubins) and writes their launches, evaluated from the family manifest, to the file
this script reads (--launches, format "kerntune-sdpa-launches/1", see bench/attention_launches.hpp).
For each shape the script:

1. makes Q, K, V (uniform in [-1, 1], [B, H, S, D], the job's dtype) and runs
   torch.nn.functional.scaled_dot_product_attention with the flash backend forced, with cuDNN
   forced and with PyTorch's default choice (a backend that refuses the shape is recorded);
2. loads every candidate's cubin through the CUDA driver API (ctypes; the tensor maps encoded as
   the worker encodes them), launches it on the same inputs and checks its output against SDPA's
   element by element with twice the family's tolerance (both are within it of the exact result);
   a candidate that fails is not timed;
3. times every side interleaved: each round runs each side once (order rotated per round), the L2
   cache flushed by a read of a buffer twice its size before each trial, CUDA events around the
   trial; when the fastest side runs below --graph-below-us, every side is timed as a CUDA graph
   of the same N launches (launch overhead out of the figure);
4. reports medians, the baseline (the fastest SDPA backend, named), our best passing candidate and
   the ratio sdpa / ours with a bootstrap 95% interval over the rounds (paired by round).

The output (--out) is rewritten after every shape, so a run cut short keeps what it measured.
Runs on the GPU machine (torch, Python 3); needs nothing else. Without torch or a GPU it writes an
output whose "error" says so and exits 2. --check-only validates the launches file and exits.
"""
import argparse
import ctypes
import json
import math
import os
import random
import sys
import time

FORMAT = "kerntune-sdpa-launches/1"
ARG_KINDS = ("buffer", "i32", "i64", "f32", "tensor_map")
SDPA_BACKENDS = ("flash", "cudnn", "default")


# ---------------------------------------------------------------- pure parts (tested without torch)

def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--launches", required=True, help="argument file from kt-bench attention")
    parser.add_argument("--out", help="where the results go (JSON)")
    parser.add_argument("--rounds", type=int, default=30, help="interleaved rounds per shape")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs of each side first")
    parser.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples")
    parser.add_argument("--graph-below-us", type=float, default=10.0,
                        help="time as CUDA graphs when the fastest side is below this")
    parser.add_argument("--graph-batch-us", type=float, default=50.0,
                        help="a graph holds enough launches to run at least this long")
    parser.add_argument("--max-graph-launches", type=int, default=1000)
    parser.add_argument("--deadline-s", type=float, default=0.0,
                        help="start no shape after this many seconds (0 = no limit)")
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--check-only", action="store_true",
                        help="validate the launches file and exit")
    args = parser.parse_args(argv)
    if args.rounds < 3:
        parser.error("--rounds must be at least 3")
    if args.warmup < 0 or args.bootstrap < 100 or args.max_graph_launches < 1:
        parser.error("--warmup >= 0, --bootstrap >= 100 and --max-graph-launches >= 1 required")
    if not args.check_only and not args.out:
        parser.error("--out is required unless --check-only")
    return args


def _require(condition, message):
    if not condition:
        raise ValueError(message)


def validate_launches(doc):
    """Checks the argument file's structure; raises ValueError naming what is wrong."""
    _require(isinstance(doc, dict), "the launches file is not a JSON object")
    _require(doc.get("format") == FORMAT, "format is %r, expected %r" % (doc.get("format"), FORMAT))
    shapes = doc.get("shapes")
    _require(isinstance(shapes, list), "'shapes' is not a list")
    for i, shape in enumerate(shapes):
        where = "shapes[%d]" % i
        _require(isinstance(shape, dict), where + " is not an object")
        for field in ("B", "H", "S", "D"):
            _require(isinstance(shape.get(field), int) and shape[field] > 0,
                     "%s.%s is not a positive integer" % (where, field))
        _require(isinstance(shape.get("causal"), bool), where + ".causal is not a boolean")
        _require(shape.get("dtype") in ("bf16", "fp16"), where + ".dtype is not bf16 or fp16")
        _require(isinstance(shape.get("key"), str), where + ".key is not a string")
        tol = shape.get("tolerance")
        _require(isinstance(tol, dict) and all(isinstance(tol.get(f), (int, float))
                                               for f in ("atol", "rtol", "rel_l2")),
                 where + ".tolerance needs atol, rtol and rel_l2")
        candidates = shape.get("candidates")
        _require(isinstance(candidates, list), where + ".candidates is not a list")
        for j, cand in enumerate(candidates):
            cw = "%s.candidates[%d]" % (where, j)
            _require(isinstance(cand, dict), cw + " is not an object")
            for field in ("cubin", "kernel"):
                _require(isinstance(cand.get(field), str) and cand[field], cw + "." + field + " missing")
            launch = cand.get("launch")
            _require(isinstance(launch, dict), cw + ".launch is not an object")
            for field in ("grid", "block", "cluster"):
                value = launch.get(field)
                _require(isinstance(value, list) and len(value) == 3 and
                         all(isinstance(v, int) and v >= 1 for v in value),
                         "%s.launch.%s is not 3 positive integers" % (cw, field))
            _require(isinstance(launch.get("dynamic_smem"), int) and launch["dynamic_smem"] >= 0,
                     cw + ".launch.dynamic_smem is not a non-negative integer")
            buffers = cand.get("buffers")
            _require(isinstance(buffers, list), cw + ".buffers is not a list")
            names = set()
            for b in buffers:
                _require(isinstance(b, dict) and isinstance(b.get("name"), str) and
                         b.get("role") in ("input", "output", "scratch") and
                         isinstance(b.get("elements"), int) and b["elements"] >= 0 and
                         b.get("dtype") in ("bf16", "fp16", "f32", "i32", "u32"),
                         cw + ".buffers has an entry without name/role/dtype/elements")
                names.add(b["name"])
            for name in ("Q", "K", "V", "O"):
                _require(name in names, "%s has no buffer %s" % (cw, name))
            args = cand.get("args")
            _require(isinstance(args, list) and args, cw + ".args is not a non-empty list")
            for k, arg in enumerate(args):
                aw = "%s.args[%d]" % (cw, k)
                _require(isinstance(arg, dict) and arg.get("kind") in ARG_KINDS,
                         aw + " has no known kind")
                if arg["kind"] in ("buffer", "tensor_map"):
                    _require(arg.get("buffer") in names, aw + " names an unknown buffer")
                else:
                    _require(isinstance(arg.get("value"), (int, float)), aw + ".value missing")
                if arg["kind"] == "tensor_map":
                    dims, box = arg.get("dims"), arg.get("box")
                    _require(isinstance(dims, list) and isinstance(box, list) and
                             1 <= len(dims) <= 5 and len(dims) == len(box),
                             aw + " needs 1 to 5 dims and one box entry per dim")
                    _require(arg.get("swizzle") in (0, 32, 64, 128), aw + ".swizzle is bad")
    return doc


def load_launches(path):
    with open(path) as f:
        return validate_launches(json.load(f))


def median(values):
    ordered = sorted(values)
    _require(ordered, "median of nothing")
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else 0.5 * (ordered[mid - 1] + ordered[mid])


def bootstrap_ratio(numerator, denominator, iterations, seed):
    """median(numerator) / median(denominator) and its 95% percentile interval; the samples are
    paired by round, so rounds are resampled together."""
    _require(len(numerator) == len(denominator) and numerator, "samples must pair up")
    ratio = median(numerator) / median(denominator)
    rng = random.Random(seed)
    n = len(numerator)
    draws = []
    for _ in range(iterations):
        idx = [rng.randrange(n) for _ in range(n)]
        draws.append(median([numerator[i] for i in idx]) / median([denominator[i] for i in idx]))
    draws.sort()
    low = draws[int(math.floor(0.025 * (iterations - 1)))]
    high = draws[int(math.ceil(0.975 * (iterations - 1)))]
    return ratio, low, high


def graph_launches(fastest_us, below_us, batch_us, max_launches):
    """0: time single launches with events; else launches per CUDA graph."""
    if below_us <= 0 or fastest_us is None or fastest_us >= below_us:
        return 0
    return max(2, min(max_launches, int(math.ceil(batch_us / max(fastest_us, 0.1)))))


def pick_baseline(sdpa_medians):
    """(backend, median_us) of the fastest SDPA backend that ran; (None, None) if none did."""
    ran = [(us, name) for name, us in sdpa_medians.items() if us is not None]
    if not ran:
        return None, None
    us, name = min(ran)
    return name, us


def write_output(path, result):
    """Replaces the file atomically (a reader never sees half a file)."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def empty_result(error=None):
    return {"device": "", "driver": "", "torch": "", "date": time.strftime("%Y-%m-%d", time.gmtime()),
            "error": error, "shapes": []}


def log(message):
    print(message, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- the CUDA driver through ctypes

class DriverError(RuntimeError):
    pass


class _LaunchConfig(ctypes.Structure):
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint), ("gridDimZ", ctypes.c_uint),
                ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p),
                ("attrs", ctypes.c_void_p), ("numAttrs", ctypes.c_uint)]


class _LaunchAttribute(ctypes.Structure):  # id, pad to 8, a 64-byte value union
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", ctypes.c_uint * 16)]


_CLUSTER_DIMENSION = 4              # CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
_MAX_DYNAMIC_SHARED = 8             # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
_TENSOR_MAP_TYPE = {"fp16": 6, "f32": 7, "bf16": 9, "i32": 3, "u32": 2}
_SWIZZLE = {0: 0, 32: 1, 64: 2, 128: 3}
_L2_PROMOTION_128B = 2


class Driver:
    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")
        self.lib.cuGetErrorString.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]

    def check(self, name, *args):
        code = getattr(self.lib, name)(*args)
        if code != 0:
            text = ctypes.c_char_p()
            self.lib.cuGetErrorString(code, ctypes.byref(text))
            raise DriverError("%s failed: %s (%d)" % (name, (text.value or b"?").decode(), code))

    def load_function(self, cubin_path, kernel, dynamic_smem):
        with open(cubin_path, "rb") as f:
            image = f.read()
        module = ctypes.c_void_p()
        self.check("cuModuleLoadData", ctypes.byref(module), ctypes.c_char_p(image))
        function = ctypes.c_void_p()
        self.check("cuModuleGetFunction", ctypes.byref(function), module, kernel.encode())
        if dynamic_smem > 0:
            self.check("cuFuncSetAttribute", function, ctypes.c_int(_MAX_DYNAMIC_SHARED),
                       ctypes.c_int(dynamic_smem))
        return module, function

    def encode_tensor_map(self, arg, pointer, dtype):
        """A dense row-major view, innermost dim first, as worker/kernel_launch.cpp encodes it."""
        storage = (ctypes.c_uint8 * (128 + 64))()
        address = (ctypes.addressof(storage) + 63) // 64 * 64  # CUtensorMap is 64-byte aligned
        rank = len(arg["dims"])
        elem = 2 if dtype in ("bf16", "fp16") else 4
        extents = (ctypes.c_uint64 * 5)(*arg["dims"])
        strides = (ctypes.c_uint64 * 4)()
        stride = elem
        for d in range(rank):
            if d > 0:
                strides[d - 1] = stride
            stride *= arg["dims"][d]
        box = (ctypes.c_uint32 * 5)(*arg["box"])
        element_strides = (ctypes.c_uint32 * 5)(1, 1, 1, 1, 1)
        self.check("cuTensorMapEncodeTiled", ctypes.c_void_p(address),
                   ctypes.c_int(_TENSOR_MAP_TYPE[dtype]), ctypes.c_uint32(rank),
                   ctypes.c_void_p(pointer), extents, strides, box, element_strides,
                   ctypes.c_int(0), ctypes.c_int(_SWIZZLE[arg["swizzle"]]),
                   ctypes.c_int(_L2_PROMOTION_128B), ctypes.c_int(0))
        return storage, address

    def launch(self, function, launch, params, stream):
        grid, block, cluster = launch["grid"], launch["block"], launch["cluster"]
        if cluster == [1, 1, 1]:
            self.check("cuLaunchKernel", function, *[ctypes.c_uint(v) for v in grid + block],
                       ctypes.c_uint(launch["dynamic_smem"]), ctypes.c_void_p(stream), params, None)
            return
        attribute = _LaunchAttribute()
        attribute.id = _CLUSTER_DIMENSION
        attribute.value[0], attribute.value[1], attribute.value[2] = cluster
        config = _LaunchConfig(*(grid + block), launch["dynamic_smem"], stream,
                               ctypes.addressof(attribute), 1)
        self.check("cuLaunchKernelEx", ctypes.byref(config), function, params, None)


class Candidate:
    """One of our variants, loaded and bound to the shape's Q, K, V and its own outputs."""

    def __init__(self, torch, driver, spec, inputs, torch_dtype):
        self.spec = spec
        self.driver = driver
        self.launch_spec = spec["launch"]
        self.module, self.function = driver.load_function(spec["cubin"], spec["kernel"],
                                                          self.launch_spec["dynamic_smem"])
        types = {"bf16": torch.bfloat16, "fp16": torch.float16, "f32": torch.float32,
                 "i32": torch.int32, "u32": torch.int32}
        self.buffers, self.dtypes = {}, {}
        for b in spec["buffers"]:
            self.dtypes[b["name"]] = b["dtype"]
            if b["role"] == "input" and b["name"] in inputs:
                self.buffers[b["name"]] = inputs[b["name"]]
            else:
                self.buffers[b["name"]] = torch.zeros(max(1, b["elements"]), dtype=types[b["dtype"]],
                                                      device="cuda")
        self.output = self.buffers["O"]
        self.keep = []  # ctypes storage the parameter pointers point into
        pointers = []
        for arg in spec["args"]:
            kind = arg["kind"]
            if kind == "buffer":
                value = ctypes.c_uint64(self.buffers[arg["buffer"]].data_ptr())
                address = ctypes.addressof(value)
            elif kind == "tensor_map":
                value, address = driver.encode_tensor_map(
                    arg, self.buffers[arg["buffer"]].data_ptr(), self.dtypes[arg["buffer"]])
            elif kind == "i32":
                value = ctypes.c_int32(int(arg["value"]))
                address = ctypes.addressof(value)
            elif kind == "i64":
                value = ctypes.c_int64(int(arg["value"]))
                address = ctypes.addressof(value)
            else:
                value = ctypes.c_float(float(arg["value"]))
                address = ctypes.addressof(value)
            self.keep.append(value)
            pointers.append(address)
        self.params = (ctypes.c_void_p * len(pointers))(*pointers)

    def __call__(self, torch):
        self.driver.launch(self.function, self.launch_spec, self.params,
                           torch.cuda.current_stream().cuda_stream)

    def close(self):
        try:
            self.driver.check("cuModuleUnload", self.module)
        except DriverError:
            pass


# ---------------------------------------------------------------- timing

def check_output(torch, ours, reference, tolerance):
    """Per element |ours - ref| <= 2*(atol + rtol*|ref|), and rel L2 <= 2*rel_l2."""
    o, r = ours.float(), reference.float()
    diff = (o - r).abs()
    finite = torch.isfinite(o)
    bound = 2.0 * (tolerance["atol"] + tolerance["rtol"] * r.abs())
    bad = int(((diff > bound) | ~finite).sum().item())
    max_abs = float(torch.where(finite, diff, torch.full_like(diff, float("inf"))).max().item())
    rel_l2 = float((torch.linalg.vector_norm(o - r) / torch.linalg.vector_norm(r).clamp_min(1e-30)).item())
    passed = bad == 0 and rel_l2 <= 2.0 * tolerance["rel_l2"]
    return {"passed": passed, "bad_elements": bad, "max_abs_error": max_abs, "rel_l2": rel_l2}


class Side:
    """Something timed: a name, a function that enqueues one run, and a context it runs in."""

    def __init__(self, name, run, context=None):
        self.name, self.run, self.context = name, run, context
        self.graph = None
        self.samples = []
        self.error = None

    def enter(self):
        return self.context() if self.context else _NullContext()


class _NullContext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def time_shape(torch, sides, args, flush):
    """Interleaved rounds; fills side.samples (us per launch). Returns (timing, launches)."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def once(side, repeat):
        flush()
        with side.enter():
            start.record()
            if side.graph is not None:
                side.graph.replay()
            else:
                for _ in range(repeat):
                    side.run()
            end.record()
        end.synchronize()
        return start.elapsed_time(end) * 1e3 / max(1, repeat if side.graph is None else launches)

    for side in sides:
        for _ in range(args.warmup):
            with side.enter():
                side.run()
    torch.cuda.synchronize()
    estimates = [min(once(side, 1) for _ in range(3)) for side in sides]
    launches = graph_launches(min(estimates), args.graph_below_us, args.graph_batch_us,
                              args.max_graph_launches)
    if launches:
        stream = torch.cuda.Stream()
        for side in sides:
            with side.enter():
                stream.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(stream):  # warm-up on a side stream, as capture wants
                    for _ in range(2):
                        side.run()
                torch.cuda.current_stream().wait_stream(stream)
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    for _ in range(launches):
                        side.run()
            side.graph = graph
        torch.cuda.synchronize()
    for r in range(args.rounds):
        for i in range(len(sides)):
            side = sides[(i + r) % len(sides)]  # rotate the order: no side always goes first
            side.samples.append(once(side, 1))
    return ("graph" if launches else "events"), launches


def run_shape(torch, driver, entry, args, flush, seed):
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    B, H, S, D, causal = entry["B"], entry["H"], entry["S"], entry["D"], entry["causal"]
    torch_dtype = torch.bfloat16 if entry["dtype"] == "bf16" else torch.float16
    result = {"key": entry["key"], "dtype": entry["dtype"], "error": None, "sdpa": {},
              "candidates": [], "best": None}
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    q, k, v = [(torch.rand(B, H, S, D, device="cuda", generator=gen, dtype=torch.float32) * 2 - 1)
               .to(torch_dtype) for _ in range(3)]
    backends = {"flash": lambda: sdpa_kernel(SDPBackend.FLASH_ATTENTION),
                "cudnn": lambda: sdpa_kernel(SDPBackend.CUDNN_ATTENTION),
                "default": None}
    sdpa_out = {}

    def sdpa():
        sdpa_out["o"] = F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    sides = []
    reference = None
    for name in SDPA_BACKENDS:
        side = Side("sdpa-" + name, sdpa, backends[name])
        try:
            with side.enter():
                sdpa()
            torch.cuda.synchronize()
            if name == "default" or reference is None:
                reference = sdpa_out["o"].clone()
            sides.append(side)
            result["sdpa"][name] = {"median_us": None}
        except Exception as error:  # a backend that refuses the shape is data
            result["sdpa"][name] = {"error": str(error).splitlines()[0][:300]}
            log("[%s %s] sdpa %s: unavailable (%s)" % (entry["key"], entry["dtype"], name,
                                                      result["sdpa"][name]["error"]))
    if reference is None:
        result["error"] = "no SDPA backend ran this shape"
        return result
    ours = []
    for spec in entry["candidates"]:
        record = {"variant_id": spec.get("variant_id"), "config": spec.get("config"),
                  "median_us": None}
        result["candidates"].append(record)
        try:
            cand = Candidate(torch, driver, spec, {"Q": q, "K": k, "V": v}, torch_dtype)
            cand.output.fill_(float("nan"))
            cand(torch)
            torch.cuda.synchronize()
            record["check"] = check_output(torch, cand.output.view(B, H, S, D), reference,
                                           entry["tolerance"])
        except Exception as error:
            record["check"] = {"passed": False, "error": str(error)[:300]}
            log("[%s %s] variant %s: %s" % (entry["key"], entry["dtype"], record["variant_id"],
                                             record["check"]["error"]))
            continue
        log("[%s %s] variant %s check: %s" % (entry["key"], entry["dtype"], record["variant_id"],
                                               json.dumps(record["check"])))
        if record["check"]["passed"]:
            side = Side("ours-%s" % record["variant_id"], lambda c=cand: c(torch))
            side.record, side.candidate = record, cand
            ours.append(side)
            sides.append(side)
    if not ours:
        result["error"] = "no candidate passed the output check against SDPA"
        return result
    result["timing"], result["graph_launches"] = time_shape(torch, sides, args, flush)
    result["rounds"] = args.rounds
    for side in sides:
        if side.name.startswith("sdpa-"):
            result["sdpa"][side.name[5:]]["median_us"] = median(side.samples)
        else:
            side.record["median_us"] = median(side.samples)
    medians = {name: result["sdpa"][name].get("median_us") for name in SDPA_BACKENDS}
    backend, sdpa_us = pick_baseline(medians)
    best = min(ours, key=lambda s: s.record["median_us"])
    baseline_side = next(s for s in sides if s.name == "sdpa-" + backend)
    ratio, low, high = bootstrap_ratio(baseline_side.samples, best.samples, args.bootstrap, seed)
    result.update({"sdpa_backend": backend, "sdpa_us": sdpa_us, "ours_us": best.record["median_us"],
                   "best": {"variant_id": best.record["variant_id"], "config": best.record["config"],
                            "median_us": best.record["median_us"]},
                   "max_abs_error": best.record["check"]["max_abs_error"],
                   "ratio": ratio, "ratio_low": low, "ratio_high": high})
    for side in ours:
        side.candidate.close()
    return result


def main(argv):
    args = parse_args(argv)
    try:
        launches = load_launches(args.launches)
    except (OSError, ValueError) as error:
        log("sdpa_baseline: bad launches file %s: %s" % (args.launches, error))
        if args.out:
            write_output(args.out, empty_result("bad launches file: %s" % error))
        return 2
    if args.check_only:
        print("ok: %d shape(s), %d candidate(s)" % (len(launches["shapes"]),
              sum(len(s["candidates"]) for s in launches["shapes"])))
        return 0
    started = time.monotonic()
    try:
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("torch sees no CUDA device")
        torch.cuda.init()
        torch.zeros(1, device="cuda")  # the primary context, current on this thread
        driver = Driver()
    except Exception as error:
        log("sdpa_baseline: cannot time on a GPU: %s" % error)
        write_output(args.out, empty_result("cannot time on a GPU: %s" % error))
        return 2
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    version = ctypes.c_int()
    driver.check("cuDriverGetVersion", ctypes.byref(version))
    result = empty_result()
    result.update({"device": props.name, "driver": "CUDA driver %d" % version.value,
                   "torch": torch.__version__, "torch_cuda": torch.version.cuda,
                   "cudnn": torch.backends.cudnn.version(), "rounds": args.rounds})
    l2 = int(getattr(props, "L2_cache_size", 0) or 64 * 1024 * 1024)
    flush_buffer = torch.ones(max(2 * l2, 1 << 20) // 4, dtype=torch.float32, device="cuda")
    result["flush_bytes"] = flush_buffer.numel() * 4

    def flush():
        flush_buffer.sum()  # a read of every byte: what ran before leaves L2

    for i, entry in enumerate(launches["shapes"]):
        if args.deadline_s > 0 and time.monotonic() - started > args.deadline_s:
            result["shapes"].append({"key": entry["key"], "dtype": entry["dtype"],
                                     "error": "skipped: the script's deadline had passed"})
            continue
        log("[%s %s] %d candidate(s)" % (entry["key"], entry["dtype"], len(entry["candidates"])))
        try:
            shape_result = run_shape(torch, driver, entry, args, flush, args.seed + i)
        except Exception as error:  # one shape's failure does not end the run
            shape_result = {"key": entry["key"], "dtype": entry["dtype"], "error": str(error)[:500]}
        if shape_result.get("ratio") is not None:
            log("[%s %s] ours %.1f us, sdpa %.1f us (%s), ratio %.3f [%.3f, %.3f] (%s)" % (
                entry["key"], entry["dtype"], shape_result["ours_us"], shape_result["sdpa_us"],
                shape_result["sdpa_backend"], shape_result["ratio"], shape_result["ratio_low"],
                shape_result["ratio_high"], shape_result["timing"]))
        else:
            log("[%s %s] %s" % (entry["key"], entry["dtype"], shape_result.get("error")))
        result["shapes"].append(shape_result)
        write_output(args.out, result)
        torch.cuda.empty_cache()
    write_output(args.out, result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
