"""The arithmetic family manifests are written in ("M*K < 2^31", "K % 8 == 0", "4*B*H*S*S*D*(CAUSAL
? 0.5 : 1)"), evaluated in Python for the conformance sweep: shape constraints, buffer sizes and
flop counts of a shape. The daemon evaluates the same texts with muparser (tuner/expression.cpp);
this is a small independent reader of the same grammar: `^` is a power, `/` divides in floating
point, `%` is fmod, `?:` is the conditional, and cdiv, min, max, floor, ceil, sqrt, pow2 exist.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Callable, Dict, List, Tuple

_TOKEN = re.compile(r"\s*(?:(\d+\.\d*|\.\d+|\d+)|([A-Za-z_]\w*)|(\|\||&&|==|!=|<=|>=|[-+*/%^()<>?:,!]))")

FUNCTIONS: Dict[str, Callable[..., float]] = {
    "cdiv": lambda a, b: math.ceil(a / b),
    "min": min,
    "max": max,
    "floor": math.floor,
    "ceil": math.ceil,
    "sqrt": math.sqrt,
    "abs": abs,
    "pow2": lambda x: 1.0 if x > 0 and (int(x) & (int(x) - 1)) == 0 and x == int(x) else 0.0,
}

# Binary operators by precedence, loosest first (muparser's order).
_BINARY_LEVELS: List[Tuple[str, ...]] = [("||",), ("&&",), ("==", "!="), ("<", "<=", ">", ">="), ("+", "-"),
                                         ("*", "/", "%")]


class ExpressionError(ValueError):
    pass


@functools.lru_cache(maxsize=4096)
def _token_tuple(text: str) -> Tuple[str, ...]:
    return tuple(_scan(text))


def _tokens(text: str) -> List[str]:
    return list(_token_tuple(text))


def _scan(text: str) -> List[str]:
    out: List[str] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match or match.end() == pos:
            raise ExpressionError(f"cannot read {text!r} at {text[pos:]!r}")
        out.append(next(g for g in match.groups() if g is not None))
        pos = match.end()
    return out


class _Parser:
    """Recursive descent over the token list, evaluating as it goes (the texts are short)."""

    def __init__(self, text: str, names: Dict[str, float]):
        self.text = text
        self.tokens = _tokens(text)
        self.pos = 0
        self.names = names

    def peek(self) -> str:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else ""

    def take(self, expected: str = "") -> str:
        token = self.peek()
        if expected and token != expected:
            raise ExpressionError(f"{self.text!r}: expected {expected!r}, found {token or 'the end'!r}")
        self.pos += 1
        return token

    def parse(self) -> float:
        value = self.conditional()
        if self.pos != len(self.tokens):
            raise ExpressionError(f"{self.text!r}: unexpected {self.peek()!r}")
        return value

    def conditional(self) -> float:
        condition = self.binary(0)
        if self.peek() != "?":
            return condition
        self.take("?")
        when_true = self.conditional()
        self.take(":")
        when_false = self.conditional()
        return when_true if condition else when_false

    def binary(self, level: int) -> float:
        if level == len(_BINARY_LEVELS):
            return self.power()
        left = self.binary(level + 1)
        while self.peek() in _BINARY_LEVELS[level]:
            op = self.take()
            right = self.binary(level + 1)
            left = _apply(op, left, right, self.text)
        return left

    def power(self) -> float:
        base = self.unary()
        if self.peek() == "^":  # right-associative
            self.take()
            return float(base) ** self.power()
        return base

    def unary(self) -> float:
        if self.peek() == "-":
            self.take()
            return -self.unary()
        if self.peek() == "+":
            self.take()
            return self.unary()
        if self.peek() == "!":
            self.take()
            return 0.0 if self.unary() else 1.0
        return self.atom()

    def atom(self) -> float:
        token = self.take()
        if token == "(":
            value = self.conditional()
            self.take(")")
            return value
        if token and (token[0].isdigit() or token[0] == "."):
            return float(token)
        if token and (token[0].isalpha() or token[0] == "_"):
            if self.peek() == "(":
                function = FUNCTIONS.get(token)
                if function is None:
                    raise ExpressionError(f"{self.text!r}: unknown function {token}")
                self.take("(")
                args = [self.conditional()]
                while self.peek() == ",":
                    self.take(",")
                    args.append(self.conditional())
                self.take(")")
                return float(function(*args))
            if token not in self.names:
                raise ExpressionError(f"{self.text!r}: unbound name {token}")
            return float(self.names[token])
        raise ExpressionError(f"{self.text!r}: unexpected {token or 'end'!r}")


def _apply(op: str, a: float, b: float, text: str) -> float:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        if b == 0:
            raise ExpressionError(f"{text!r}: division by zero")
        return a / b
    if op == "%":
        if b == 0:
            raise ExpressionError(f"{text!r}: modulo by zero")
        return math.fmod(a, b)
    if op == "<":
        return float(a < b)
    if op == "<=":
        return float(a <= b)
    if op == ">":
        return float(a > b)
    if op == ">=":
        return float(a >= b)
    if op == "==":
        return float(a == b)
    if op == "!=":
        return float(a != b)
    if op == "&&":
        return float(bool(a) and bool(b))
    if op == "||":
        return float(bool(a) or bool(b))
    raise ExpressionError(f"{text!r}: unknown operator {op}")


def evaluate(text: str, names: Dict[str, float]) -> float:
    """The value of a manifest expression with `names` bound (dims, elem_bytes, ...)."""
    return _Parser(text, names).parse()


def names_in(text: str) -> List[str]:
    """The variable names an expression uses (function names left out)."""
    tokens = _tokens(text)
    out = []
    for i, token in enumerate(tokens):
        if (token[0].isalpha() or token[0] == "_") and not (i + 1 < len(tokens) and tokens[i + 1] == "("):
            if token not in out:
                out.append(token)
    return out
