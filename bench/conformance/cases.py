"""The conformance sweep's cases: family manifests read as the daemon reads them (dims in the
manifest's order, their ranges, the shape constraints) and a seeded generator drawing at least 30
shapes per family across each dim's range, with the awkward ones a user will send: M = 1, primes,
odd and unaligned extents, tiny problems, very large K, ragged S, G = 1, causal and not, per-tensor
and block scales (gemm_fp8's BLOCK_SCALED). Each case
gets a dtype, a search, a budget and a client path (CLI or HTTP) from balanced shuffled lists, so
every value appears and the pairing changes with the seed.

Everything here is pure Python and deterministic for a seed: `sweep.py --dry-run --seed N` prints
the same cases on any machine, and test_cases.py checks the coverage without a GPU.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
from dataclasses import asdict, dataclass, field
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from manifest_expr import ExpressionError, evaluate

# The families the sweep covers: the shipped ones, and the example a user registers over the API.
FAMILY_FOLDERS: List[Tuple[str, bool]] = [
    ("gemm", False),
    ("gemm_fp8", False),
    ("dual_gemm_silu", False),
    ("attention_fwd", False),
    ("examples/wmma_gemm", True),
]

# Families whose whole space is small enough for an exhaustive job (budget 0, every variant that
# survives the constraints): wmma_gemm has 4 x 4 x 3 configs, 35 of them valid. The shipped
# families have thousands, so they are searched with budgets only.
SMALL_SPACE_FAMILIES = ("wmma_gemm",)
# "default": the request names no search, so the daemon's default for a budget (predicted) runs.
LEARNED_SEARCHES = ("local", "model", "random", "predicted", "default")
BUDGETS = (8, 8, 8, 12, 16, 24, 32)  # weighted to the cheap end: per-case cost stays low
CLIENTS = ("cli", "http")
CLI_SHAPE_SYNTAXES = ("named", "positional")  # m=..,n=..,k=.. or 64x128x256 in manifest dim order

# Default cost caps per shape, so one huge case cannot eat a GPU call: elements over the family's
# input and output buffers, and the manifest's flop count.
DEFAULT_MAX_ELEMENTS = 1 << 25  # 33.5 M elements: 64 MiB per 16-bit operand at most
DEFAULT_MAX_FLOPS = float(1 << 38)  # 2.7e11: about a millisecond per launch on an H100

# A GEMM-like family's reduction is long from here on ("very large K").
LARGE_K = 8192
LONG_S = 2048
COUNT_DIMS = ("B", "H", "G")  # how many problems, not how large one is
# Flags (dims of two values, dealt evenly like any choice) tagged by name: (tag for 0, tag for 1).
FLAG_TAGS = {"CAUSAL": ("noncausal", "causal"), "BLOCK_SCALED": ("tensor_scaled", "block_scaled")}


@dataclass
class Dim:
    name: str
    lo: int
    hi: int
    multiple: int = 1  # from a shape constraint "NAME % m == 0"
    choices: Optional[List[int]] = None  # from "NAME == a || NAME == b", or a range of two values

    def aligned_down(self, value: int) -> int:
        """The largest allowed value <= value (at least the smallest allowed one)."""
        if self.choices:
            below = [c for c in self.choices if c <= value]
            return max(below) if below else min(self.choices)
        value = min(max(value, self.lo), self.hi)
        value -= value % self.multiple
        if value < self.lo:
            value = self.lo + (-self.lo) % self.multiple
        return value

    def allowed(self, value: int) -> bool:
        if self.choices:
            return value in self.choices
        return self.lo <= value <= self.hi and value % self.multiple == 0


@dataclass
class FamilySpec:
    name: str
    folder: str  # relative to the repository root
    registered: bool  # registered over the API by the sweep (not shipped with the daemon)
    dims: List[Dim]
    dtypes: List[str]
    limit_constraints: List[str]  # shape constraints other than multiples and choices
    all_constraints: List[str]
    buffers: List[Dict]
    flops: str
    tolerance: Dict[str, Dict[str, float]]
    manifest: Dict = field(repr=False, default_factory=dict)

    @property
    def dim_names(self) -> List[str]:
        return [d.name for d in self.dims]

    def dim(self, name: str) -> Dim:
        return next(d for d in self.dims if d.name == name)

    def has(self, *names: str) -> bool:
        return all(n in self.dim_names for n in names)

    @property
    def searches(self) -> Tuple[str, ...]:
        if self.name in SMALL_SPACE_FAMILIES:
            return ("exhaustive",) + LEARNED_SEARCHES
        return LEARNED_SEARCHES


_MULTIPLE = re.compile(r"^\s*(\w+)\s*%\s*(\d+)\s*==\s*0\s*$")
_CHOICE = re.compile(r"^\s*(\w+)\s*==\s*(\d+)(?:\s*\|\|\s*\1\s*==\s*\d+)+\s*$")


def load_family(repo_root: str, folder: str, registered: bool) -> FamilySpec:
    """A family's manifest, dims kept in the manifest's order (json keeps object order)."""
    path = os.path.join(repo_root, "kernel_templates", folder, "manifest.json")
    with open(path, encoding="utf-8") as f:
        manifest = json.load(f)
    dims = [Dim(name, int(spec["min"]), int(spec["max"])) for name, spec in manifest["dims"].items()]
    by_name = {d.name: d for d in dims}
    limits: List[str] = []
    for text in manifest.get("shape_constraints", []):
        multiple, choice = _MULTIPLE.match(text), _CHOICE.match(text)
        if multiple and multiple.group(1) in by_name:
            by_name[multiple.group(1)].multiple = int(multiple.group(2))
        elif choice and choice.group(1) in by_name:
            by_name[choice.group(1)].choices = sorted(int(v) for v in re.findall(r"==\s*(\d+)", text))
        else:
            limits.append(text)
    for d in dims:  # a flag such as CAUSAL (0..1) is a choice too
        if d.choices is None and d.hi - d.lo <= 1:
            d.choices = list(range(d.lo, d.hi + 1))
    return FamilySpec(name=manifest["name"], folder=os.path.join("kernel_templates", folder), registered=registered,
                      dims=dims, dtypes=list(manifest["dtypes"]), limit_constraints=limits,
                      all_constraints=list(manifest.get("shape_constraints", [])), buffers=manifest.get("buffers", []),
                      flops=manifest.get("flops", "0"), tolerance=manifest.get("tolerance", {}), manifest=manifest)


def load_families(repo_root: str, only: Optional[Sequence[str]] = None) -> List[FamilySpec]:
    families = [load_family(repo_root, folder, registered) for folder, registered in FAMILY_FOLDERS]
    if only:
        families = [f for f in families if f.name in only]
    return families


# ---- what a shape costs, and whether the manifest allows it ---------------------------------------

def shape_elements(family: FamilySpec, shape: Dict[str, int]) -> int:
    """Elements over the input and output buffers (scratch depends on the variant, left out)."""
    total = 0
    for buffer in family.buffers:
        if buffer.get("role") in ("input", "output"):
            total += int(evaluate(str(buffer["elements"]), dict(shape)))
    return total


def shape_flops(family: FamilySpec, shape: Dict[str, int]) -> float:
    return evaluate(family.flops, dict(shape))


def failed_constraints(family: FamilySpec, shape: Dict[str, int]) -> List[str]:
    """The manifest's rules the shape breaks: dim ranges, multiples, choices, shape constraints."""
    failed = []
    for d in family.dims:
        value = shape.get(d.name)
        if value is None or not (d.lo <= value <= d.hi):
            failed.append(f"{d.name} in [{d.lo}, {d.hi}]")
    for text in family.all_constraints:
        try:
            if not evaluate(text, dict(shape)):
                failed.append(text)
        except ExpressionError as error:
            failed.append(f"{text} ({error})")
    return failed


@dataclass
class Caps:
    max_elements: int = DEFAULT_MAX_ELEMENTS
    max_flops: float = DEFAULT_MAX_FLOPS

    def fits(self, family: FamilySpec, shape: Dict[str, int]) -> bool:
        return shape_elements(family, shape) <= self.max_elements and shape_flops(family, shape) <= self.max_flops


# ---- drawing shapes -------------------------------------------------------------------------------

def is_prime(n: int) -> bool:
    if n < 2:
        return False
    if n % 2 == 0:
        return n == 2
    return all(n % p for p in range(3, int(math.isqrt(n)) + 1, 2))


def prime_at_most(n: int, lo: int) -> Optional[int]:
    n = max(n, 2)
    while n >= max(lo, 2):
        if is_prime(n) and n >= 3:
            return n
        n -= 1
    return None


class ShapeDraw:
    """One shape being drawn: every dim starts at its lowest allowed value; each set() keeps the
    shape within the manifest's limits and the cost caps given the dims set so far (the costs and
    the limit constraints grow with every dim, so the largest feasible value is a bisection)."""

    def __init__(self, family: FamilySpec, caps: Caps, rng: random.Random, choices: Dict[str, int]):
        self.family, self.caps, self.rng = family, caps, rng
        self.shape: Dict[str, int] = {}
        for d in family.dims:
            self.shape[d.name] = choices.get(d.name, d.aligned_down(d.lo) if not d.choices else min(d.choices))

    def fits(self, shape: Dict[str, int]) -> bool:
        try:
            if any(not evaluate(text, dict(shape)) for text in self.family.limit_constraints):
                return False
            return self.caps.fits(self.family, shape)
        except ExpressionError:
            return False

    def max_for(self, name: str) -> int:
        """The largest allowed value of `name` with the other dims as they are (its lowest if even
        that does not fit)."""
        d = self.family.dim(name)
        lo = d.aligned_down(d.lo)
        trial = dict(self.shape)
        trial[name] = d.hi
        if self.fits(trial):
            return d.aligned_down(d.hi)
        good, bad = lo, d.hi
        while bad - good > 1:
            mid = (good + bad) // 2
            trial[name] = mid
            if self.fits(trial):
                good = mid
            else:
                bad = mid
        return d.aligned_down(good)

    def set(self, name: str, value: int) -> int:
        d = self.family.dim(name)
        value = d.aligned_down(min(int(value), self.max_for(name)))
        self.shape[name] = value
        return value

    def log_uniform(self, name: str, lo: Optional[int] = None, hi: Optional[int] = None) -> int:
        """A value spread evenly in log scale between lo (default: the dim's min) and hi (default:
        the largest that fits)."""
        d = self.family.dim(name)
        top = self.max_for(name)
        hi = top if hi is None else min(hi, top)
        lo = max(d.lo, 1) if lo is None else max(lo, d.lo, 1)
        if hi <= lo:
            return self.set(name, hi)
        value = int(round(math.exp(self.rng.uniform(math.log(lo), math.log(hi + 1)))))
        return self.set(name, min(max(value, lo), hi))

    def prime(self, name: str, lo: Optional[int] = None, hi: Optional[int] = None) -> int:
        d = self.family.dim(name)
        if d.multiple != 1 or d.choices:
            return self.log_uniform(name, lo, hi)
        value = self.log_uniform(name, max(lo or 3, 3), hi)
        p = prime_at_most(value, d.lo)
        return self.set(name, p if p is not None else value)

    def odd(self, name: str, lo: Optional[int] = None, hi: Optional[int] = None) -> int:
        d = self.family.dim(name)
        value = self.log_uniform(name, lo, hi)
        if d.multiple == 1 and not d.choices and value % 2 == 0:
            value = value - 1 if value - 1 >= d.lo and value > 1 else value + 1
            value = self.set(name, value)
        return value

    def unaligned(self, name: str, lo: Optional[int] = None, hi: Optional[int] = None) -> int:
        """A ragged extent: a multiple of 64 plus a tail the kernels' vector width does not divide
        (for a dim that must be a multiple of m, a tail of a few m)."""
        d = self.family.dim(name)
        if d.choices:
            return self.log_uniform(name, lo, hi)
        base = self.log_uniform(name, max(lo or 64, 64), hi)
        step = max(d.multiple, 1)
        tail_options = [t for t in range(step, 64, step) if t % max(8, 4 * step)]
        tail = self.rng.choice(tail_options) if tail_options else step
        value = (base // 64) * 64 + tail
        value = self.set(name, value)
        return value

    def aligned(self, name: str, lo: Optional[int] = None, hi: Optional[int] = None) -> int:
        """A round extent, as models use: a power of two, or a multiple of 128 above 128."""
        value = self.log_uniform(name, max(lo or 64, 64), hi)
        top = self.max_for(name)
        candidates = [2 ** int(math.log2(max(value, 1)))]
        if value > 256:
            candidates.append((value // 128) * 128)
        pick = self.rng.choice(candidates)
        return self.set(name, pick if pick <= top else self.family.dim(name).aligned_down(top))


# A shape kind sets some dims on the draw; the dims it leaves alone stay at their minimum, so each
# kind names every dim it wants spread.
ShapeKind = Callable[[ShapeDraw], None]


def _spread(draw: ShapeDraw, names: Iterable[str]) -> None:
    names = list(names)
    draw.rng.shuffle(names)  # which dim gets the room first changes from shape to shape
    for name in names:
        draw.log_uniform(name)


def gemm_kinds(family: FamilySpec) -> Dict[str, ShapeKind]:
    """Kinds for a family with M, N, K (and maybe G): gemm, gemm_fp8, dual_gemm_silu, wmma_gemm. A
    dim that must be a multiple (gemm_fp8's K of 16, wmma_gemm's of 16) gets no primes or odd
    values; a flag such as gemm_fp8's BLOCK_SCALED is a choice, dealt separately."""
    grouped = family.has("G")

    def small_groups(draw: ShapeDraw) -> None:
        if grouped:
            draw.log_uniform("G", 1, 8)

    def tiny(draw: ShapeDraw) -> None:
        small_groups(draw)
        for name in ("M", "N", "K"):
            draw.log_uniform(name, None, max(24, family.dim(name).lo * 2))

    def m_min(draw: ShapeDraw) -> None:  # decode: one token (M = 1, or the family's minimum)
        small_groups(draw)
        draw.set("M", family.dim("M").lo)
        _spread(draw, ("N", "K"))

    def primes(draw: ShapeDraw) -> None:
        small_groups(draw)
        for name in draw.rng.sample(["M", "N", "K"], 3):
            draw.prime(name, None, 6000)

    def odd(draw: ShapeDraw) -> None:
        small_groups(draw)
        for name in draw.rng.sample(["M", "N", "K"], 3):
            draw.odd(name, None, 6000)

    def unaligned(draw: ShapeDraw) -> None:
        small_groups(draw)
        for name in draw.rng.sample(["M", "N", "K"], 3):
            draw.unaligned(name, None, 8192)

    def large_k(draw: ShapeDraw) -> None:  # a long reduction: K as large as the caps allow
        small_groups(draw)
        draw.log_uniform("M", None, 160)
        draw.log_uniform("N", None, 400)
        top = draw.max_for("K")
        draw.log_uniform("K", max(LARGE_K, top // 4), top)

    def skinny(draw: ShapeDraw) -> None:
        small_groups(draw)
        draw.log_uniform("M", None, 16)
        draw.log_uniform("K", 256, 8192)
        draw.log_uniform("N", 1024)

    def tall(draw: ShapeDraw) -> None:
        small_groups(draw)
        draw.log_uniform("N", None, 64)
        draw.log_uniform("K", 64, 4096)
        draw.log_uniform("M", 1024)

    def aligned(draw: ShapeDraw) -> None:
        small_groups(draw)
        for name in draw.rng.sample(["M", "N", "K"], 3):
            draw.aligned(name, 64, 8192)

    def spread(draw: ShapeDraw) -> None:
        _spread(draw, ["G", "M", "N", "K"] if grouped else ["M", "N", "K"])

    def dim_max(draw: ShapeDraw) -> None:  # one dim at the top of its feasible range, the others small
        small_groups(draw)
        names = ["M", "N", "K"]
        top = draw.rng.choice(names)
        for name in names:
            if name != top:
                draw.log_uniform(name, None, 32)
        draw.set(top, draw.max_for(top))

    kinds: Dict[str, ShapeKind] = {"tiny": tiny, "m_min": m_min, "primes": primes, "odd": odd,
                                   "unaligned": unaligned, "large_k": large_k, "skinny": skinny, "tall": tall,
                                   "aligned": aligned, "spread": spread, "dim_max": dim_max}
    if grouped:
        def g_one(draw: ShapeDraw) -> None:
            draw.set("G", 1)
            _spread(draw, ("M", "N", "K"))

        def g_many(draw: ShapeDraw) -> None:  # many small groups
            for name in ("M", "N", "K"):
                draw.log_uniform(name, None, 200)
            draw.log_uniform("G", 16)

        kinds.update({"g_one": g_one, "g_many": g_many})
    return kinds


def attention_kinds(family: FamilySpec) -> Dict[str, ShapeKind]:
    """Kinds for a family with B, H, S (D and CAUSAL are choices, dealt separately)."""

    def tiny(draw: ShapeDraw) -> None:
        draw.log_uniform("S", None, 16)

    def s_one(draw: ShapeDraw) -> None:
        draw.set("S", 1)
        draw.log_uniform("B", None, 8)
        draw.log_uniform("H", None, 16)

    def prime_s(draw: ShapeDraw) -> None:
        draw.log_uniform("B", None, 4)
        draw.log_uniform("H", None, 16)
        draw.prime("S", 3, 4096)

    def ragged_s(draw: ShapeDraw) -> None:  # S not a multiple of any query or key block
        draw.log_uniform("B", None, 4)
        draw.log_uniform("H", None, 16)
        draw.set("S", draw.rng.randint(1, 40) * 64 + draw.rng.randint(1, 63))

    def aligned_s(draw: ShapeDraw) -> None:
        draw.log_uniform("B", None, 4)
        draw.log_uniform("H", None, 16)
        draw.aligned("S", 64, 4096)

    def long_s(draw: ShapeDraw) -> None:  # one long sequence, as long as the caps allow
        top = draw.max_for("S")
        draw.log_uniform("S", max(LONG_S, top // 4), top)

    def many_heads(draw: ShapeDraw) -> None:
        draw.log_uniform("S", None, 64)
        draw.log_uniform("B", 4, 64)
        draw.log_uniform("H", 16)

    def odd_bh(draw: ShapeDraw) -> None:
        draw.prime("B", 3, 7)
        draw.odd("H", 3, 25)
        draw.odd("S", 65, 1500)

    def spread(draw: ShapeDraw) -> None:
        _spread(draw, ("B", "H", "S"))

    return {"tiny": tiny, "s_one": s_one, "prime_s": prime_s, "ragged_s": ragged_s, "aligned_s": aligned_s,
            "long_s": long_s, "many_heads": many_heads, "odd_bh": odd_bh, "spread": spread}


def generic_kinds(family: FamilySpec) -> Dict[str, ShapeKind]:
    """Any other family: dims spread over their ranges, tiny, one dim at its top."""
    free = [d.name for d in family.dims if not d.choices]

    def tiny(draw: ShapeDraw) -> None:
        for name in free:
            draw.log_uniform(name, None, 24)

    def spread(draw: ShapeDraw) -> None:
        _spread(draw, free)

    def dim_max(draw: ShapeDraw) -> None:
        top = draw.rng.choice(free)
        draw.set(top, draw.max_for(top))

    return {"tiny": tiny, "spread": spread, "dim_max": dim_max}


def kinds_for(family: FamilySpec) -> Dict[str, ShapeKind]:
    if family.has("M", "N", "K"):
        return gemm_kinds(family)
    if family.has("B", "H", "S"):
        return attention_kinds(family)
    return generic_kinds(family)


# ---- what a shape is, by its values ----------------------------------------------------------------

def shape_tags(family: FamilySpec, shape: Dict[str, int]) -> List[str]:
    """The categories a shape falls in, read off its values (not from the kind that drew it), so
    the coverage test checks what was generated."""
    tags = []
    free = [d for d in family.dims if not d.choices]
    values = [shape[d.name] for d in free]
    if all(v <= max(32, d.lo * 2) for v, d in zip(values, free)):
        tags.append("tiny")
    if any(is_prime(v) and v >= 3 for v in values):
        tags.append("prime")
    if any(v % 2 == 1 and v > 1 for v in values):
        tags.append("odd")
    # Unaligned: an extent the kernels' 16-byte vectors (or, for a dim that must be a multiple of
    # m, four of its steps) do not divide. Counts (batch, heads, groups) are not extents.
    if any(shape[d.name] % max(8, 4 * d.multiple) for d in free if d.name not in COUNT_DIMS):
        tags.append("unaligned")
    if all(shape[d.name] % 64 == 0 for d in free if d.name not in COUNT_DIMS):
        tags.append("aligned")
    if "M" in shape:
        if shape["M"] == 1:
            tags.append("m_one")
        if shape["M"] == family.dim("M").lo:
            tags.append("m_min")
    if "K" in shape and shape["K"] >= LARGE_K:
        tags.append("large_k")
    if "G" in shape:
        tags.append("g_one" if shape["G"] == 1 else "g_many" if shape["G"] >= 16 else "g_few")
    if "S" in shape:
        if shape["S"] % 64:
            tags.append("ragged_s")
        if shape["S"] >= LONG_S:
            tags.append("long_s")
        if shape["S"] == 1:
            tags.append("s_one")
    if "B" in shape and "H" in shape and shape["B"] * shape["H"] >= 256:
        tags.append("many_heads")
    for name, (off, on) in FLAG_TAGS.items():
        if name in shape:
            tags.append(on if shape[name] else off)
    for d in family.dims:
        if d.choices and d.name not in FLAG_TAGS:
            tags.append(f"{d.name}={shape[d.name]}")
    return tags


# ---- cases ------------------------------------------------------------------------------------------

@dataclass
class Case:
    family: str
    index: int  # within its family, in generation order
    kind: str  # the shape kind that drew it
    shape: Dict[str, int]  # in the manifest's dim order
    dtype: str
    search: str
    budget: int  # 0 = the whole space (exhaustive on a small space only)
    client: str  # "cli" or "http"
    shape_syntax: str  # cli: "named" or "positional"; http: "json"
    tags: List[str]
    elements: int
    flops: float
    part: int = 1  # 1-based, of the run's --part n

    @property
    def id(self) -> str:
        return f"{self.family}#{self.index:02d}"

    def shape_text(self) -> str:
        return "x".join(str(v) for v in self.shape.values())

    def shape_arg(self) -> str:
        """The CLI's --shape: NAME=VALUE pairs (lower-case names, as users type them), or the
        extents alone in the manifest's dim order."""
        if self.shape_syntax == "positional":
            return self.shape_text()
        return ",".join(f"{k.lower()}={v}" for k, v in self.shape.items())

    def to_json(self) -> Dict:
        out = asdict(self)
        out["id"] = self.id
        return out


def balanced(values: Sequence, n: int, rng: random.Random) -> List:
    """n items in which every value appears floor(n/len) or ceil(n/len) times (each at least once
    when n >= len), in a seeded random order."""
    out: List = []
    while len(out) < n:
        block = list(values)
        rng.shuffle(block)
        out.extend(block)
    out = out[:n]
    rng.shuffle(out)
    return out


def generate_family_cases(family: FamilySpec, seed: int, count: int, caps: Caps) -> List[Case]:
    """`count` cases of distinct shapes for one family, reproducible from (seed, family name)."""
    rng = random.Random(f"kerntune-conformance:{seed}:{family.name}")
    kinds = kinds_for(family)
    kind_names = balanced(list(kinds), count, rng)
    choice_dims = {d.name: balanced(d.choices or [], count, rng) for d in family.dims if d.choices}
    dtypes = balanced(family.dtypes, count, rng)
    searches = balanced(family.searches, count, rng)
    budgets = balanced(BUDGETS, count, rng)
    clients = balanced(CLIENTS, count, rng)
    syntaxes = balanced(CLI_SHAPE_SYNTAXES, count, rng)
    seen = set()
    cases: List[Case] = []
    for i in range(count):
        kind = kind_names[i]
        choices = {name: values[i] for name, values in choice_dims.items()}
        shape = None
        for attempt in range(40):
            draw = ShapeDraw(family, caps, rng, choices)
            # A kind that keeps drawing shapes already taken (the tiny ones) spreads out instead.
            (kinds[kind] if attempt < 20 else kinds.get("spread", kinds[kind]))(draw)
            key = tuple(draw.shape.values())
            if key not in seen and not failed_constraints(family, draw.shape) and caps.fits(family, draw.shape):
                shape = dict(draw.shape)
                break
        if shape is None:
            raise RuntimeError(f"{family.name}: no new valid shape of kind {kind} in 40 draws (caps too tight?)")
        seen.add(tuple(shape.values()))
        search = searches[i]
        budget = 0 if search == "exhaustive" else budgets[i]
        client = clients[i]
        cases.append(Case(family=family.name, index=i, kind=kind, shape=shape, dtype=dtypes[i], search=search,
                          budget=budget, client=client, shape_syntax=syntaxes[i] if client == "cli" else "json",
                          tags=shape_tags(family, shape), elements=shape_elements(family, shape),
                          flops=shape_flops(family, shape)))
    return cases


def assign_parts(cases: List[Case], parts: int) -> None:
    """Deals a family's cases out to the parts kind by kind, so each part gets a share of every
    kind (and a kind drawn at least `parts` times appears in every part)."""
    by_kind: Dict[str, List[Case]] = {}
    for case in cases:
        by_kind.setdefault(case.kind, []).append(case)
    dealt = 0
    for kind in sorted(by_kind):
        for case in by_kind[kind]:
            case.part = dealt % parts + 1
            dealt += 1


def run_order(cases_by_family: List[List[Case]]) -> List[Case]:
    """The order a part runs in: families interleaved case by case, and within a family the first
    case of every kind before the second of any, so a run cut short has covered every family and
    as many kinds as it had time for."""
    ordered_families = []
    for cases in cases_by_family:
        rank: Dict[str, int] = {}
        keyed = []
        for case in cases:
            keyed.append((rank.get(case.kind, 0), case.index, case))
            rank[case.kind] = rank.get(case.kind, 0) + 1
        ordered_families.append([c for _, _, c in sorted(keyed, key=lambda t: (t[0], t[1]))])
    out: List[Case] = []
    for i in range(max((len(c) for c in ordered_families), default=0)):
        for cases in ordered_families:
            if i < len(cases):
                out.append(cases[i])
    return out


def generate(families: List[FamilySpec], seed: int, shapes_per_family: int, caps: Caps,
             part: int = 1, parts: int = 1) -> List[Case]:
    """The cases of one part of a run, in run order."""
    per_family = []
    for family in families:
        cases = generate_family_cases(family, seed, shapes_per_family, caps)
        assign_parts(cases, parts)
        per_family.append([c for c in cases if c.part == part])
    return run_order(per_family)
