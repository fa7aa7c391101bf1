#!/usr/bin/env python3
"""Bad (and borderline) inputs across gpukit's public API, tried as a user would: each probe is
printed with its outcome. An outcome is fine when it is a correct result or a clear exception of
a sensible type; a probe is flagged (!!) when it raises a type no user should see for bad input
(AttributeError, ZeroDivisionError, NumPy's internal errors, a Rust panic...), a type other than
the one expected, or returns a wrong result, or takes over PROBE_TIMEOUT seconds.

    python scripts/probe_inputs.py [AREA ...]     (areas: see --list; default all)

Runs on the backend gpukit picks (GPUKIT_BACKEND=cpu to force the CPU). Environment-variable
probes run in child processes. Exit status 1 when anything was flagged. notes/reliability.md
lists what these found."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections import Counter

import numpy as np

import gpukit as gk

os.environ["RUST_BACKTRACE"] = "0"  # a Rust panic's message without pages of backtrace
TIMEOUT_S = int(os.environ.get("PROBE_TIMEOUT", "20"))
# Exception types that a user's bad input should never produce: they say that gpukit failed
# to check its arguments before some internal step did.
UNCLEAN = (
    AttributeError,
    ZeroDivisionError,
    NameError,
    UnboundLocalError,
    AssertionError,
    RecursionError,
    SystemError,
    KeyError,
)
PROBES: dict[str, list] = {}


class Hang(Exception):
    pass


def probe(area: str, label: str, fn, expect=None):
    """expect: None (any result, or a clean exception), an exception class or tuple of them
    (must raise one of those), or a callable that checks the result (True when right)."""
    PROBES.setdefault(area, []).append((label, fn, expect))


def _alarm(*_):
    raise Hang(f"no answer within {TIMEOUT_S} s")


def _short(text, n=150) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 3] + "..."


def _unclean(e: BaseException) -> bool:
    if isinstance(e, UNCLEAN) and not isinstance(e, gk.GpukitError):
        return True
    name = type(e).__name__
    if name == "PanicException" or not isinstance(e, Exception):
        return True
    # NumPy's own messages leaking from inside gpukit (the user never called NumPy).
    return "numpy" in type(e).__module__ and not isinstance(e, np.exceptions.AxisError)


def run(label: str, fn, expect) -> tuple[bool, str]:
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIMEOUT_S)
    try:
        result = fn()
        if isinstance(result, gk.GPUArray):
            result.to_numpy()  # errors of asynchronous work surface here
    except BaseException as e:  # a probe reports whatever escapes, panics included
        signal.alarm(0)
        if isinstance(e, KeyboardInterrupt):
            raise
        outcome = f"raised {type(e).__name__}: {_short(e)}"
        if isinstance(e, Hang):
            return False, "HANG " + outcome
        if isinstance(expect, (type, tuple)):
            if isinstance(e, expect):
                return True, outcome
            names = getattr(expect, "__name__", None) or "/".join(t.__name__ for t in expect)
            return False, f"{outcome} (expected {names})"
        if callable(expect) and not isinstance(expect, (type, tuple)):
            return False, f"{outcome} (expected a result)"
        return not _unclean(e), outcome
    signal.alarm(0)
    shown = _short(repr(result) if not isinstance(result, gk.GPUArray) else _describe(result))
    if isinstance(expect, (type, tuple)):
        return False, f"returned {shown} (expected an exception)"
    if callable(expect):
        try:
            right = expect(result)
        except Exception as e:
            right, shown = False, f"{shown}; check failed: {type(e).__name__}: {e}"
        return bool(right), ("returned " if right else "WRONG: returned ") + shown
    return True, "returned " + shown


def _describe(a) -> str:
    values = a.to_numpy()
    body = np.array2string(values.reshape(-1)[:6], separator=",", threshold=6)
    return f"GPUArray {a.dtype.name} {a.shape} {body}"


def close(expected, rtol=1e-12):
    def check(result):
        return np.allclose(result.to_numpy(), expected, rtol=rtol, atol=0)

    return check


def equals(expected):
    """A check that the result equals `expected` (values, shape and dtype when an array)."""
    want = np.asarray(expected)

    def check(result):
        got = result.to_numpy() if isinstance(result, gk.GPUArray) else np.asarray(result)
        return (
            got.shape == want.shape
            and got.dtype == want.dtype
            and np.array_equal(got, want, equal_nan=want.dtype.kind in "fc")
        )

    return check


# --- probes ---------------------------------------------------------------------------------------
def creation():
    a = "creation"
    for shape in [
        -1,
        (2, -3),
        2**62,
        (2**40, 2**40),
        (2**62, 2**62),
        1.5,
        "3",
        None,
        [2, None],
        (1,) * 65,
        True,
        [[2]],
        np.array([2, 3]),
        (np.int8(2), 3),
        2**64,
    ]:
        probe(a, f"empty({shape!r:.40})", lambda s=shape: gk.empty(s))
        probe(a, f"zeros({shape!r:.40})", lambda s=shape: gk.zeros(s))
    probe(a, "ones((1,)*64)", lambda: gk.ones((1,) * 64), lambda r: r.ndim == 64)
    probe(a, "empty(())", lambda: gk.empty(()), lambda r: r.shape == ())
    for dtype in ["float128", "complex64", object, "U3", str, "bf16", "float8", 3, "", "i9"]:
        probe(a, f"zeros(3, dtype={dtype!r})", lambda d=dtype: gk.zeros(3, d), TypeError)
    probe(a, "zeros(3, dtype=None)", lambda: gk.zeros(3, None), equals(np.zeros(3)))
    probe(a, "zeros(3, dtype=int)", lambda: gk.zeros(3, int), equals(np.zeros(3, int)))
    probe(a, "zeros(3, dtype=bool)", lambda: gk.zeros(3, bool), equals(np.zeros(3, bool)))
    for value, dtype in [
        ("a", None),
        (None, None),
        ([1, 2], None),
        (1 + 2j, None),
        (float("nan"), "int32"),
        (300, "uint8"),
        (-1, "uint8"),
        (2**70, "int64"),
        (1e300, "float16"),
        (float("inf"), "int64"),
        (2**64 - 1, "uint64"),
        (True, "float32"),
    ]:
        probe(a, f"full(3, {value!r}, {dtype!r})", lambda v=value, d=dtype: gk.full(3, v, d))
    probe(a, "full(3, 300, 'uint8') like NumPy 2", lambda: gk.full(3, 300, "uint8"), OverflowError)
    probe(a, "full(3, nan, 'int32') like NumPy", lambda: gk.full(3, np.nan, "int32"), ValueError)
    probe(
        a,
        "full(2, 2**64-1, 'uint64')",
        lambda: gk.full(2, 2**64 - 1, "uint64"),
        equals(np.full(2, 2**64 - 1, np.uint64)),
    )
    for args in [
        (0,),
        (-5,),
        (0, 10, 0),
        (float("nan"),),
        (float("inf"),),
        (1e20,),
        (0, 1, 1e-20),
        (2**70,),
        ("3",),
        (None,),
        (3, 1),
        (0, 5, -1),
        (1 + 1j,),
        (10, None, 2),
    ]:
        probe(a, f"arange{args!r}", lambda x=args: gk.arange(*x))
    probe(a, "arange(5, dtype=bool)", lambda: gk.arange(5, dtype=bool))
    probe(a, "arange(3.5)", lambda: gk.arange(3.5), equals(np.arange(3.5)))
    probe(a, "arange(-3)", lambda: gk.arange(-3), equals(np.arange(-3)))
    for args in [
        (0, 1, -1),
        (0, 1, 2.5),
        (0, 1, 10**12),
        (0, 1, "5"),
        (0, 1, None),
        (float("nan"), 1, 3),
        (0, float("inf"), 3),
        (0, 1, 0),
        (0, 1, 1),
    ]:
        probe(a, f"linspace{args!r}", lambda x=args: gk.linspace(*x))
    probe(a, "linspace(0, 1, 1)", lambda: gk.linspace(0, 1, 1), equals(np.linspace(0, 1, 1)))
    for args in [(-1,), (3, -2), (3, 3, 10), (3, 3, -10), (2**40,), (2.5,), ("3",), (0,)]:
        probe(a, f"eye{args!r}", lambda x=args: gk.eye(*x))
    for obj in [
        [1, "a"],
        [[1, 2], [3]],
        object(),
        None,
        np.array([1 + 2j]),
        np.array(["a"]),
        np.array([np.datetime64("2024-01-01")]),
        np.array([1, 2], dtype=object),
        b"abc",
        {1: 2},
        {1, 2},
        "text",
        range(5),
        (x for x in range(3)),
        np.ma.masked_array([1, 2], mask=[0, 1]),
        np.float128(1) if hasattr(np, "float128") else 1.0,
    ]:
        probe(a, f"asarray({_short(repr(obj), 40)})", lambda o=obj: gk.asarray(o))
    probe(a, "asarray(range(5))", lambda: gk.asarray(range(5)), equals(np.arange(5)))
    probe(a, "asarray(2**70)", lambda: gk.asarray(2**70), (OverflowError, TypeError))
    probe(
        a, "asarray([1,2], dtype='complex64')", lambda: gk.asarray([1, 2], "complex64"), TypeError
    )
    probe(a, "asarray(np.float64 scalar)", lambda: gk.asarray(np.float64(2)), equals(2.0))
    for fn in ("empty_like", "zeros_like", "ones_like"):
        probe(a, f"{fn}([1, 2])", lambda f=fn: getattr(gk, f)([1, 2]))
        probe(a, f"{fn}(None)", lambda f=fn: getattr(gk, f)(None))
        probe(
            a,
            f"{fn}(np.zeros(2))",
            lambda f=fn: getattr(gk, f)(np.zeros(2)),
            lambda r: r.shape == (2,),
        )
    probe(a, "full_like(gk.ones(2), 'x')", lambda: gk.full_like(gk.ones(2), "x"))
    probe(a, "from_numpy([1, 2]) (a list)", lambda: gk.from_numpy([1, 2]))
    probe(a, "to_numpy(np.ones(2)) (not a GPUArray)", lambda: gk.to_numpy(np.ones(2)))


def dtypes_and_conversions():
    a = "dtypes"
    x = gk.arange(4.0)
    for dtype in ["complex64", object, "U3", None, "float128", 5, "int"]:
        probe(a, f"astype({dtype!r})", lambda d=dtype: x.astype(d))
    probe(
        a,
        "astype(float16) of 1e6",
        lambda: gk.full(2, 1e6).astype("float16"),
        equals(np.full(2, np.inf, np.float16)),
    )
    probe(a, "astype(int32) of nan", lambda: gk.full(2, np.nan).astype("int32"))
    probe(a, "astype(uint8) of -1.5", lambda: gk.full(2, -1.5).astype("uint8"))
    probe(
        a, "astype(bool) of nan", lambda: gk.full(2, np.nan).astype(bool), equals(np.ones(2, bool))
    )
    probe(a, "float(gk.ones(2))", lambda: float(gk.ones(2)), ValueError)
    probe(a, "int(gk.full((), nan))", lambda: int(gk.full((), np.nan)), ValueError)
    probe(a, "bool(gk.ones(0))", lambda: bool(gk.ones(0)), ValueError)
    probe(a, "len(gk.ones(()))", lambda: len(gk.ones(())), TypeError)
    probe(a, "iter(gk.ones(()))", lambda: list(iter(gk.ones(()))), TypeError)
    probe(a, "list(gk.arange(3))", lambda: [float(v) for v in gk.arange(3)])
    probe(a, "gk.ones(0).item()", lambda: gk.ones(0).item(), ValueError)
    probe(a, "hash(gk.ones(2))", lambda: hash(gk.ones(2)), TypeError)
    probe(a, "np.asarray(a, copy=False)", lambda: np.asarray(gk.ones(2), copy=False), ValueError)
    probe(
        a,
        "np.asarray(a, dtype=int)",
        lambda: np.asarray(gk.ones(2), dtype=int),
        equals(np.ones(2, int)),
    )
    probe(a, "repr(huge)", lambda: len(repr(gk.zeros(10**6))))
    probe(a, "a.evictable = 'no'", lambda: setattr(gk.ones(2), "evictable", "no"))
    # a shape/strides/dtype that does not fit the memory would read past it (a crash on the next
    # use): NumPy refuses them.
    probe(
        a,
        "a.shape = (4,) of 2 elements",
        lambda: setattr(gk.ones(2), "shape", (4,)),
        (AttributeError, ValueError),
    )
    probe(
        a,
        "a.strides = (800,)",
        lambda: setattr(gk.ones(2), "strides", (800,)),
        (AttributeError, ValueError),
    )
    probe(
        a,
        "a.dtype = float64 on int8",
        lambda: setattr(gk.ones(2, "int8"), "dtype", np.dtype("float64")),
        (AttributeError, ValueError),
    )
    probe(a, "a.foo = 1", lambda: setattr(gk.ones(2), "foo", 1), AttributeError)


def elementwise():
    a = "elementwise"
    x, i8, u8 = gk.arange(4.0), gk.arange(4, dtype="int8"), gk.arange(4, dtype="uint8")
    probe(
        a,
        "ones(3) - np.mean([1., 2.])",
        lambda: gk.ones(3) - np.mean([1.0, 2.0]),
        equals(np.ones(3) - 1.5),
    )
    probe(a, "np.float64(2) * ones(3)", lambda: np.float64(2) * gk.ones(3), equals(np.full(3, 2.0)))
    probe(
        a,
        "ones(3) + np.float32(1)",
        lambda: gk.ones(3, "float32") + np.float32(1),
        equals(np.full(3, 2, np.float32)),
    )
    probe(a, "uint8 + 300", lambda: u8 + 300, OverflowError)
    probe(a, "int8 * -129", lambda: i8 * -129, OverflowError)
    probe(a, "uint8 == -1", lambda: u8 == -1, equals(np.zeros(4, bool)))
    probe(a, "int8 < 1000", lambda: i8 < 1000, equals(np.ones(4, bool)))
    probe(a, "uint64 + 2**64", lambda: gk.ones(2, "uint64") + 2**64, OverflowError)
    probe(
        a,
        "float32 + 2**70",
        lambda: gk.ones(2, "float32") + 2**70,
        equals(np.ones(2, np.float32) + 2**70),
    )
    probe(a, "float32 + 10**400", lambda: gk.ones(2, "float32") + 10**400, OverflowError)
    probe(a, "int8 ** -1", lambda: i8**-1, ValueError)
    probe(
        a,
        "int8 ** int8 array with a negative",
        lambda: i8 ** gk.asarray(np.int8([1, -1, 0, 1])),
        ValueError,
    )
    probe(a, "x + 'a'", lambda: x + "a", TypeError)
    probe(a, "x + None", lambda: x + None, TypeError)
    probe(a, "x + [1, 2]", lambda: x.__add__([1, 2]), ValueError)
    probe(a, "x + object()", lambda: x + object(), TypeError)
    probe(a, "x + 1j", lambda: x + 1j, TypeError)
    probe(a, "x + np.complex64(1)", lambda: x + np.complex64(1), TypeError)
    probe(a, "x + np.ones(5)", lambda: x + np.ones(5), ValueError)
    probe(a, "x + np.array(['a'])", lambda: x + np.array(["a"]), TypeError)
    probe(a, "x & x (floats)", lambda: x & x, TypeError)
    probe(a, "~x (floats)", lambda: ~x, TypeError)
    probe(a, "x << 1", lambda: x << 1, TypeError)
    probe(a, "divmod(x, 2)", lambda: divmod(x, 2), TypeError)
    probe(a, "x @ 2", lambda: x @ 2, ValueError)
    probe(a, "i8 // 0", lambda: i8 // 0, equals(np.zeros(4, np.int8)))
    probe(a, "i8 % 0", lambda: i8 % 0, equals(np.zeros(4, np.int8)))
    probe(a, "x / 0", lambda: x / 0, equals(np.array([np.nan, np.inf, np.inf, np.inf])))
    probe(a, "int8 min // -1", lambda: gk.full(2, -128, "int8") // -1)
    probe(a, "exp(1000.)", lambda: gk.exp(gk.full(2, 1000.0)), equals(np.full(2, np.inf)))
    probe(a, "log(-1.)", lambda: gk.log(gk.full(2, -1.0)), equals(np.full(2, np.nan)))
    probe(a, "sqrt('a')", lambda: gk.sqrt("a"), TypeError)
    probe(a, "exp(None)", lambda: gk.exp(None), TypeError)
    probe(a, "exp([1, 2])", lambda: gk.exp([1, 2]), equals(np.exp([1, 2])))
    probe(a, "exp(2.0) (a Python float)", lambda: gk.exp(2.0))
    probe(a, "add(1, 2) (two scalars)", lambda: gk.add(1, 2))
    probe(a, "maximum(x)", lambda: gk.maximum(x), TypeError)
    probe(a, "where(x, 1)", lambda: gk.where(x, 1), TypeError)
    probe(a, "where(cond of 5, x of 4)", lambda: gk.where(gk.ones(5, bool), x, 0), ValueError)
    probe(a, "where(2.5, x, 0)", lambda: gk.where(2.5, x, 0))
    probe(a, "clip(x, 'a', 2)", lambda: gk.clip(x, "a", 2), TypeError)
    probe(a, "clip(x, None, 2)", lambda: gk.clip(x, None, 2))
    probe(
        a,
        "clip(i8, -1000, 1000)",
        lambda: gk.clip(i8, -1000, 1000),
        equals(np.arange(4, dtype=np.int8)),
    )
    deep = gk.ones((1,) * 40)
    probe(a, "40-d + 40-d", lambda: deep + deep, lambda r: r.shape == (1,) * 40)
    probe(a, "40-d sum", lambda: deep.sum(axis=3), lambda r: r.shape == (1,) * 39)
    probe(a, "64-d + 1", lambda: gk.ones((1,) * 64) + 1, lambda r: r.ndim == 64)
    probe(a, "out=np.ones(4)", lambda: gk.add(x, 1, out=np.ones(4)), TypeError)
    probe(a, "out=list", lambda: gk.add(x, 1, out=[0, 0, 0, 0]), TypeError)
    probe(a, "out of shape (3,)", lambda: gk.add(x, 1, out=gk.empty(3)), ValueError)
    probe(
        a,
        "out of shape (2, 4) (broadcast out)",
        lambda: gk.add(x, 1, out=gk.empty((2, 4))),
        lambda r: r.shape == (2, 4),
    )
    probe(a, "float into int8 out", lambda: gk.add(x, 1, out=gk.empty(4, "int8")), TypeError)
    probe(
        a, "out = broadcast view", lambda: gk.add(x, 1, out=gk.broadcast_to(x, (2, 4))), ValueError
    )
    probe(a, "out aliases input reversed", lambda: gk.add(x, 1, out=x[::-1]))
    probe(a, "x += 'a'", lambda: x.__iadd__("a"), TypeError)
    probe(a, "i8 += 1.5", lambda: i8.__iadd__(1.5), TypeError)
    probe(a, "u8 -= 300", lambda: u8.__isub__(300), OverflowError)
    probe(a, "x (4,) += (2, 4)", lambda: x.__iadd__(gk.ones((2, 4))), ValueError)


def reductions():
    a = "reductions"
    x = gk.arange(24.0).reshape(2, 3, 4)
    for axis in [3, -4, 1.5, "0", (0, 0), [0], (0, 5), (), np.int64(1), True, None, (None,)]:
        probe(a, f"sum(axis={axis!r})", lambda ax=axis: x.sum(axis=ax))
    probe(a, "sum(axis=[0, 1])", lambda: x.sum(axis=[0, 1]), equals(x.to_numpy().sum((0, 1))))
    probe(a, "argmax(axis=(0, 1))", lambda: x.argmax(axis=(0, 1)), TypeError)
    probe(a, "argmax(axis=5)", lambda: x.argmax(axis=5), np.exceptions.AxisError)
    probe(a, "max of empty", lambda: gk.ones(0).max(), ValueError)
    probe(a, "argmin of (3, 0) axis 1", lambda: gk.ones((3, 0)).argmin(axis=1), ValueError)
    probe(
        a,
        "argmin of (0, 3) axis 1",
        lambda: gk.ones((0, 3)).argmin(axis=1),
        equals(np.zeros(0, np.int64)),
    )
    probe(a, "sum of empty", lambda: gk.ones(0).sum(), equals(0.0))
    probe(a, "mean of empty", lambda: gk.ones(0).mean(), equals(np.nan))
    probe(a, "prod of empty", lambda: gk.ones(0).prod(), equals(1.0))
    probe(a, "var(ddof=-1)", lambda: x.var(ddof=-1), close(x.to_numpy().var(ddof=-1)))
    probe(a, "var(ddof=1.5)", lambda: x.var(ddof=1.5))
    probe(a, "var(ddof='1')", lambda: x.var(ddof="1"), TypeError)
    probe(a, "var(ddof=24) (n - ddof = 0)", lambda: x.var(ddof=24), equals(np.inf))
    probe(a, "std(ddof=100)", lambda: x.std(ddof=100), equals(np.inf))
    probe(a, "var of empty", lambda: gk.ones(0).var(), equals(np.nan))
    probe(a, "cumsum(axis=3)", lambda: x.cumsum(axis=3), np.exceptions.AxisError)
    probe(a, "cumsum(axis=(0, 1))", lambda: x.cumsum(axis=(0, 1)), TypeError)
    probe(a, "cumsum of 0-d", lambda: gk.cumsum(gk.full((), 2.0)), equals(np.array([2.0])))
    probe(a, "sum of a list", lambda: gk.sum([1, 2, 3]), equals(np.int64(6)))
    probe(a, "sum of None", lambda: gk.sum(None), TypeError)
    probe(a, "sum of 'abc'", lambda: gk.sum("abc"), TypeError)
    probe(a, "sum(keepdims='yes')", lambda: x.sum(keepdims="yes"))
    probe(
        a,
        "mean of int64 near 2**62",
        lambda: gk.full(4, 2**62, "int64").mean(),
        equals(np.float64(2**62)),
    )
    probe(a, "any(axis=4)", lambda: x.any(axis=4), np.exceptions.AxisError)
    probe(
        a,
        "float16 mean of 4096 x 50 (accumulated in float32)",
        lambda: gk.full(4096, 50, "float16").mean(),
        equals(np.float16(50)),
    )


def indexing():
    a = "indexing"
    x = gk.arange(12.0).reshape(3, 4)
    for key in [
        1.5,
        "a",
        (1, 2, 3),
        10,
        -10,
        2**70,
        [1.5],
        [10],
        [[0, 1], [0]],
        {},
        {1: 2},
        (Ellipsis, Ellipsis),
        slice(0, 10, 0),
        slice(None, None, 2**70),
        np.array([True]),
        np.ones((3, 5), bool),
        [True, False],
        np.array(1.5),
        gk.full(2, 1.5),
        gk.full(2, 7, "int64"),
        [-4],
        (None,) * 70,
        [[[0]]],
        object(),
        b"a",
        (slice(None), [0, 1], [0, 1, 2]),
        np.array([], dtype=object),
        [],
    ]:
        probe(a, f"x[{_short(repr(key), 40)}]", lambda k=key: x[k])
    probe(a, "x[()]", lambda: x[()], equals(x.to_numpy()))
    probe(a, "0-d[()]", lambda: gk.full((), 3.0)[()], equals(np.float64(3.0)))
    probe(a, "0-d[0]", lambda: gk.full((), 3.0)[0], IndexError)
    probe(a, "x[None, ..., None]", lambda: x[None, ..., None], lambda r: r.shape == (1, 3, 4, 1))
    probe(a, "x[::-1, ::-2]", lambda: x[::-1, ::-2], equals(x.to_numpy()[::-1, ::-2]))
    probe(a, "x[5:2]", lambda: x[5:2], lambda r: r.shape == (0, 4))
    probe(a, "x[-100:100]", lambda: x[-100:100], lambda r: r.shape == (3, 4))
    probe(a, "x[[2, -1]]", lambda: x[[2, -1]], equals(x.to_numpy()[[2, -1]]))
    probe(a, "x[x > 5]", lambda: x[x > 5], equals(x.to_numpy()[x.to_numpy() > 5]))
    probe(a, "x[gk.ones(3, bool)]", lambda: x[gk.ones(3, bool)], lambda r: r.shape == (3, 4))
    probe(a, "x[True]", lambda: x[True], lambda r: r.shape == (1, 3, 4))
    probe(a, "take(x, 100)", lambda: gk.take(x, 100), IndexError)
    probe(a, "take(x, [0], axis=5)", lambda: gk.take(x, [0], axis=5), np.exceptions.AxisError)
    probe(a, "take(x, 1.5)", lambda: gk.take(x, 1.5), (TypeError, IndexError))
    probe(a, "nonzero(0-d)", lambda: gk.nonzero(gk.full((), 1.0)), ValueError)
    probe(a, "flatnonzero(list)", lambda: gk.flatnonzero([0, 1, 2]))
    for key, value in [
        (0, "x"),
        (0, [1, 2, 3]),
        (slice(None), None),
        (0, 1e400),
        (0, np.nan),
        (0, gk.ones(5)),
        ((0, 0), [1, 2]),
        (0, object()),
        (0, 1 + 2j),
        ([0, 0], [1, 2]),
        ([10], 1.0),
        (x > 5, [1, 2]),
        (x > 5, 1.0),
        (Ellipsis, gk.ones((3, 1))),
        (0, gk.ones(4, "int8")),
    ]:

        def assign(k=key, v=value):
            y = x.copy()
            y[k] = v
            return y

        probe(a, f"y[{_short(repr(key), 25)}] = {_short(repr(value), 25)}", assign)
    i = gk.arange(4, dtype="int32")
    for value in [np.nan, 2**40, 1e20, -1.5, 300]:

        def store(v=value):
            y = i.copy()
            y[0] = v
            return y

        probe(a, f"int32[0] = {value!r}", store)
    u = gk.arange(4, dtype="uint8")

    def wrap():
        y = u.copy()
        y[0] = 300
        return y

    probe(a, "uint8[0] = 300 (NumPy 2: OverflowError)", wrap, OverflowError)

    def broadcast_write():
        b = gk.broadcast_to(x[0], (3, 4))
        b[0, 0] = 5

    probe(a, "broadcast view write", broadcast_write, ValueError)


def shapes_and_views():
    a = "views"
    x = gk.arange(12.0).reshape(3, 4)
    for shape in [
        (-1, -1),
        (2.5,),
        ("3",),
        (2, -2),
        (None,),
        (2**64,),
        (),
        (5,),
        (0, -1),
        ([3, 4],),
        (np.int64(12),),
        ((3, 4), 1),
        (-3, -4),
        (True, 12),
    ]:
        probe(a, f"reshape{_short(repr(shape), 40)}", lambda s=shape: x.reshape(*s))
    probe(a, "ones(0).reshape(0, -1)", lambda: gk.ones(0).reshape(0, -1), ValueError)
    probe(a, "ones(0).reshape(-1)", lambda: gk.ones(0).reshape(-1), lambda r: r.shape == (0,))
    for axes in [(0, 0), (0,), (5,), (0, 1, 2), ("a", 1), (1.5, 0), (-1, -2), ((1, 0),)]:
        probe(a, f"transpose{axes!r}", lambda ax=axes: x.transpose(*ax))
    probe(a, "swapaxes(0, 5)", lambda: x.swapaxes(0, 5), np.exceptions.AxisError)
    probe(a, "swapaxes(0, 1.5)", lambda: x.swapaxes(0, 1.5), TypeError)
    probe(a, "squeeze(axis=0)", lambda: x.squeeze(axis=0), ValueError)
    probe(a, "squeeze(axis=5)", lambda: x.squeeze(axis=5), np.exceptions.AxisError)
    probe(a, "expand_dims(x, 5)", lambda: gk.expand_dims(x, 5), np.exceptions.AxisError)
    probe(a, "expand_dims(x, (0, 0))", lambda: gk.expand_dims(x, (0, 0)), ValueError)
    probe(a, "expand_dims(x, 1.5)", lambda: gk.expand_dims(x, 1.5), TypeError)
    probe(
        a,
        "expand_dims(x, np.int64(0))",
        lambda: gk.expand_dims(x, np.int64(0)),
        lambda r: r.shape == (1, 3, 4),
    )
    probe(a, "broadcast_to(x, (4,))", lambda: gk.broadcast_to(x, (4,)), ValueError)
    probe(a, "broadcast_to(x, (-1, 4))", lambda: gk.broadcast_to(x, (-1, 4)), ValueError)
    probe(a, "broadcast_to(x, 'a')", lambda: gk.broadcast_to(x, "a"), TypeError)
    probe(a, "concatenate([])", lambda: gk.concatenate([]), ValueError)
    probe(
        a,
        "concatenate(axis=None)",
        lambda: gk.concatenate([x, x], axis=None),
        equals(np.concatenate([x.to_numpy()] * 2, None)),
    )
    probe(a, "concatenate(axis=2)", lambda: gk.concatenate([x, x], axis=2), np.exceptions.AxisError)
    probe(a, "concatenate(axis=1.5)", lambda: gk.concatenate([x, x], axis=1.5), TypeError)
    probe(
        a,
        "concatenate(x) (one array)",
        lambda: gk.concatenate(x),
        equals(np.concatenate(x.to_numpy())),
    )
    probe(a, "concatenate mismatched", lambda: gk.concatenate([x, gk.ones((3, 5))]), ValueError)
    probe(a, "concatenate ndim differ", lambda: gk.concatenate([x, gk.ones(4)]), ValueError)
    probe(a, "concatenate 0-d", lambda: gk.concatenate([gk.ones(()), gk.ones(())]), ValueError)
    probe(a, "concatenate [x, 1]", lambda: gk.concatenate([x, 1]), (ValueError, TypeError))
    probe(a, "concatenate(None)", lambda: gk.concatenate(None), TypeError)
    probe(a, "stack([])", lambda: gk.stack([]), ValueError)
    probe(a, "stack(axis=-4)", lambda: gk.stack([x, x], axis=-4), np.exceptions.AxisError)
    probe(a, "stack different shapes", lambda: gk.stack([x, x[:2]]), ValueError)
    probe(a, "split(x, 0)", lambda: gk.split(x, 0), ValueError)
    probe(a, "split(x, 2)", lambda: gk.split(x, 2), ValueError)
    probe(a, "split(x, [5, 2])", lambda: gk.split(x, [5, 2]))
    probe(a, "split(x, 1.5)", lambda: gk.split(x, 1.5), TypeError)
    probe(a, "split(x, -1)", lambda: gk.split(x, -1), ValueError)
    probe(a, "split(x, 2, axis=3)", lambda: gk.split(x, 2, axis=3), np.exceptions.AxisError)
    probe(
        a,
        "ascontiguousarray(0-d)",
        lambda: gk.ascontiguousarray(gk.ones(())),
        lambda r: r.shape == (1,),
    )


def linalg():
    a = "linalg"
    m = gk.ones((2, 3))
    for left, right in [
        ((3,), (4,)),
        ((), (3,)),
        ((2, 3), (2, 3)),
        ((2, 2, 3), (3, 3, 4)),
        ((0, 3), (3, 0)),
        ((3,), (3,)),
        ((2, 3), (3,)),
        ((1, 0), (0, 1)),
    ]:
        probe(a, f"matmul{left}@{right}", lambda p=left, q=right: gk.ones(p) @ gk.ones(q))
    probe(
        a,
        "matmul((1,0),(0,1)) is zeros",
        lambda: gk.ones((1, 0)) @ gk.ones((0, 1)),
        equals(np.zeros((1, 1))),
    )
    probe(
        a,
        "int8 @ bool",
        lambda: gk.ones((2, 2), "int8") @ gk.ones((2, 2), bool),
        equals(np.full((2, 2), 2, np.int8)),
    )
    probe(a, "bf16 @ int32", lambda: gk.ones((2, 2), gk.bfloat16) @ gk.ones((2, 2), "int32"))
    probe(a, "m @ 'a'", lambda: m @ "a", TypeError)
    probe(a, "m @ [[1], [2], [3]]", lambda: m @ [[1], [2], [3]], equals(np.full((2, 1), 6.0)))
    probe(a, "matmul(m, None)", lambda: gk.matmul(m, None), TypeError)
    probe(a, "dot(2, 3)", lambda: gk.dot(2, 3))
    probe(a, "dot(m, m)", lambda: gk.dot(m, m), ValueError)
    probe(a, "dot(m, 'a')", lambda: gk.dot(m, "a"), TypeError)
    probe(
        a,
        "linear(x, w) mismatched",
        lambda: gk.linear(gk.ones((2, 3)), gk.ones((4, 5))),
        ValueError,
    )
    probe(a, "linear bias wrong", lambda: gk.linear(m, gk.ones((4, 3)), gk.ones(5)), ValueError)
    probe(a, "linear(w 1-D)", lambda: gk.linear(m, gk.ones(3)), ValueError)
    probe(a, "linear(x 0-d)", lambda: gk.linear(gk.ones(()), gk.ones((4, 3))), ValueError)
    probe(a, "linear(ints)", lambda: gk.linear(gk.ones((2, 3), "int32"), gk.ones((4, 3), "int32")))


def nn():
    a = "nn"
    x = gk.asarray(np.random.default_rng(0).standard_normal((2, 3, 8)).astype(np.float32))
    probe(a, "softmax(ints)", lambda: gk.nn.softmax(gk.ones(3, "int32")), TypeError)
    probe(a, "softmax(axis=5)", lambda: gk.nn.softmax(x, axis=5), np.exceptions.AxisError)
    probe(a, "softmax(axis=1.5)", lambda: gk.nn.softmax(x, axis=1.5), TypeError)
    probe(a, "softmax(0-d)", lambda: gk.nn.softmax(gk.ones(())))
    probe(
        a,
        "softmax(empty rows)",
        lambda: gk.nn.softmax(gk.ones((3, 0))),
        lambda r: r.shape == (3, 0),
    )
    probe(a, "softmax(list)", lambda: gk.nn.softmax([1.0, 2.0]))
    probe(a, "softmax(None)", lambda: gk.nn.softmax(None), TypeError)
    probe(a, "log_softmax(all -inf)", lambda: gk.nn.log_softmax(gk.full(3, -np.inf)))
    probe(a, "layer_norm weight (7,)", lambda: gk.nn.layer_norm(x, gk.ones(7)), ValueError)
    probe(a, "layer_norm eps=-1", lambda: gk.nn.layer_norm(x, eps=-1.0))
    probe(a, "layer_norm eps=nan", lambda: gk.nn.layer_norm(x, eps=float("nan")))
    probe(a, "layer_norm eps='a'", lambda: gk.nn.layer_norm(x, eps="a"), TypeError)
    probe(a, "layer_norm(0-d)", lambda: gk.nn.layer_norm(gk.ones(())), ValueError)
    probe(a, "layer_norm(last dim 0)", lambda: gk.nn.layer_norm(gk.ones((2, 0))))
    probe(a, "rms_norm eps=-1", lambda: gk.nn.rms_norm(x, eps=-1.0))
    probe(a, "rms_norm weight bf16 vs f32 x", lambda: gk.nn.rms_norm(x, gk.ones(8, gk.bfloat16)))
    probe(a, "rms_norm weight int", lambda: gk.nn.rms_norm(x, gk.ones(8, "int32")))
    table = gk.ones((5, 4), "float32")
    for ids in [
        [5],
        [-1],
        [1.5],
        gk.full(2, 7, "int64"),
        np.array([2**40]),
        [[0, 1], [2]],
        "a",
        None,
        gk.ones(2, bool),
        np.array([], dtype=np.int64),
    ]:
        probe(a, f"embedding({_short(repr(ids), 30)})", lambda i=ids: gk.nn.embedding(i, table))
    probe(a, "embedding(table 1-D)", lambda: gk.nn.embedding([0], gk.ones(4)), ValueError)
    probe(a, "embedding(empty table)", lambda: gk.nn.embedding([0], gk.ones((0, 4))), IndexError)
    probe(a, "rope_cache(-1, 8)", lambda: gk.nn.rope_cache(-1, 8), ValueError)
    probe(a, "rope_cache(4, 7)", lambda: gk.nn.rope_cache(4, 7), ValueError)
    probe(a, "rope_cache(4, 0)", lambda: gk.nn.rope_cache(4, 0), ValueError)
    probe(a, "rope_cache(4, 8, base=0)", lambda: gk.nn.rope_cache(4, 8, base=0))
    probe(a, "rope_cache(4, 8, base=-1)", lambda: gk.nn.rope_cache(4, 8, base=-1.0))
    probe(a, "rope_cache(2.5, 8)", lambda: gk.nn.rope_cache(2.5, 8), TypeError)
    probe(
        a, "rope_cache(4, 8, dtype=int32)", lambda: gk.nn.rope_cache(4, 8, dtype="int32"), TypeError
    )
    q = gk.ones((1, 2, 3, 8), "float32")
    cos, sin = gk.nn.rope_cache(3, 8)
    probe(a, "rope(cos wrong shape)", lambda: gk.nn.rope(q, cos[:2], sin), ValueError)
    probe(a, "rope(odd last dim)", lambda: gk.nn.rope(gk.ones((1, 3, 7)), cos, sin), ValueError)
    probe(a, "rope(layout='x')", lambda: gk.nn.rope(q, cos, sin, layout="x"), ValueError)
    probe(a, "rope(cos int)", lambda: gk.nn.rope(q, gk.ones((3, 4), "int32"), sin))
    sdpa = gk.nn.scaled_dot_product_attention
    k3 = gk.ones((1, 3, 3, 8), "float32")
    probe(a, "sdpa heads mismatch", lambda: sdpa(q, k3, k3), ValueError)
    probe(a, "sdpa head_dim 300", lambda: sdpa(*(gk.ones((1, 1, 2, 300)),) * 3), ValueError)
    probe(a, "sdpa 3-D", lambda: sdpa(*(gk.ones((2, 3, 8)),) * 3))
    probe(a, "sdpa mask wrong shape", lambda: sdpa(q, q, q, mask=gk.ones((5, 5), bool)), ValueError)
    probe(
        a,
        "sdpa mask + is_causal",
        lambda: sdpa(q, q, q, mask=gk.ones((3, 3), bool), is_causal=True),
    )
    probe(a, "sdpa scale=0", lambda: sdpa(q, q, q, scale=0.0))
    probe(a, "sdpa scale=nan", lambda: sdpa(q, q, q, scale=float("nan")))
    probe(a, "sdpa scale='a'", lambda: sdpa(q, q, q, scale="a"), TypeError)
    probe(a, "sdpa int inputs", lambda: sdpa(*(gk.ones((1, 1, 2, 4), "int32"),) * 3), TypeError)
    k0 = gk.ones((1, 2, 0, 8), "float32")
    probe(a, "sdpa no keys", lambda: sdpa(q, k0, k0), equals(np.zeros((1, 2, 3, 8), np.float32)))
    probe(a, "gelu(approximate='x')", lambda: gk.nn.gelu(x, approximate="x"), ValueError)
    probe(a, "relu(ints)", lambda: gk.nn.relu(gk.ones(3, "int32")))
    probe(a, "silu(None)", lambda: gk.nn.silu(None), TypeError)


def _tiny_model(config_changes=None, text=None):
    """A folder with a tiny random LLaMA checkpoint whose config.json has `config_changes`
    applied (or is `text`, bytes or str, as it is)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
    from model_reference import LLAMA, write_model

    folder = tempfile.mkdtemp(prefix="probe-model-")
    write_model(folder, LLAMA, np.random.default_rng(0))
    path = os.path.join(folder, "config.json")
    if text is not None:
        with open(path, "wb") as f:
            f.write(text if isinstance(text, bytes) else text.encode())
    elif config_changes:
        with open(path, "w", encoding="utf-8") as f:
            json.dump({**LLAMA, **config_changes}, f)
    return folder


def models():
    a = "models"
    load = gk.models.from_pretrained
    probe(a, "missing folder", lambda: load("/nonexistent/model"), FileNotFoundError)
    probe(a, "a file, not a folder", lambda: load(__file__), (NotADirectoryError, ValueError))
    probe(a, "folder None", lambda: load(None), TypeError)
    for label, text in [
        ("a list", "[]"),
        ("a string", '"llama"'),
        ("null", "null"),
        ("not JSON", "{model_type: llama"),
        ("empty", ""),
        ("invalid UTF-8", b"\xff\xfe{}"),
    ]:
        probe(
            a,
            f"config.json {label}",
            lambda t=text: load(_tiny_model(text=t), progress=False),
            ValueError,
        )
    gpt2 = {"model_type": "gpt2", "vocab_size": 4, "n_embd": 8, "n_layer": 1, "n_positions": 8}
    cases = {
        "no model_type": {"model_type": None},
        "model_type 3": {"model_type": 3},
        "model_type ['llama']": {"model_type": ["llama"]},
        "hidden_size 0": {"hidden_size": 0},
        "hidden_size 'big'": {"hidden_size": "big"},
        "hidden_size 64.0": {"hidden_size": 64.0},
        "num_attention_heads 0": {"num_attention_heads": 0},
        "num_attention_heads 3 (64 % 3)": {"num_attention_heads": 3},
        "num_key_value_heads 0": {"num_key_value_heads": 0},
        "num_key_value_heads 3 (4 % 3)": {"num_key_value_heads": 3},
        "vocab_size -1": {"vocab_size": -1},
        "vocab_size 10 (checkpoint has 97)": {"vocab_size": 10},
        "num_hidden_layers -1": {"num_hidden_layers": -1},
        "num_hidden_layers 'x'": {"num_hidden_layers": "x"},
        "num_hidden_layers 3 (checkpoint has 2)": {"num_hidden_layers": 3},
        "intermediate_size True": {"intermediate_size": True},
        "rms_norm_eps 'x'": {"rms_norm_eps": "x"},
        "rms_norm_eps -1": {"rms_norm_eps": -1},
        "rope_theta 0": {"rope_theta": 0},
        "rope_theta 'x'": {"rope_theta": "x"},
        "rope_parameters a list": {"rope_parameters": [1]},
        "rope_scaling 'linear'": {"rope_scaling": "linear"},
        "rope_scaling unknown type": {"rope_scaling": {"rope_type": "magic", "factor": 2}},
        "rope_scaling factor 0": {"rope_scaling": {"rope_type": "linear", "factor": 0}},
        "rope_scaling llama3 missing keys": {"rope_scaling": {"rope_type": "llama3", "factor": 8}},
        "rope_scaling llama3 low = high": {
            "rope_scaling": {
                "rope_type": "llama3",
                "factor": 8,
                "original_max_position_embeddings": 64,
                "low_freq_factor": 1,
                "high_freq_factor": 1,
            }
        },
        "head_dim 0": {"head_dim": 0},
        "head_dim 7 (odd)": {"head_dim": 7},
        "sliding_window 0": {"model_type": "mistral", "sliding_window": 0},
        "max_position_embeddings -5": {"max_position_embeddings": -5},
        "gpt2 n_head 0": {**gpt2, "n_head": 0},
        "gpt2 n_head 3 (8 % 3)": {**gpt2, "n_head": 3},
        "gpt2 missing n_embd": {"model_type": "gpt2", "vocab_size": 4},
    }
    for label, changes in cases.items():
        probe(
            a,
            label,
            lambda c=changes: load(_tiny_model(c), progress=False),
            (ValueError, TypeError),
        )
    no_weights = tempfile.mkdtemp(prefix="probe-model-")
    with open(os.path.join(no_weights, "config.json"), "w", encoding="utf-8") as f:
        json.dump({"model_type": "llama"}, f)
    probe(
        a, "no weights", lambda: load(no_weights, progress=False), (FileNotFoundError, ValueError)
    )
    probe(a, "dtype='int8'", lambda: load(_tiny_model(), dtype="int8", progress=False), TypeError)
    probe(
        a,
        "dtype='float33'",
        lambda: load(_tiny_model(), dtype="float33", progress=False),
        TypeError,
    )


def generate():
    a = "generate"
    model = gk.models.from_pretrained(_tiny_model(), progress=False)
    vocab = model.config.vocab_size
    prompt = np.array([[1, 2, 3]])
    for label, kw in [
        ("max_new_tokens=-1", dict(max_new_tokens=-1)),
        ("max_new_tokens=1.5", dict(max_new_tokens=1.5)),
        ("max_new_tokens='3'", dict(max_new_tokens="3")),
        ("max_new_tokens=0", dict(max_new_tokens=0)),
        ("temperature=nan", dict(max_new_tokens=2, temperature=float("nan"))),
        ("temperature=inf", dict(max_new_tokens=2, temperature=float("inf"))),
        ("temperature=-1", dict(max_new_tokens=2, temperature=-1.0)),
        ("top_k=0", dict(max_new_tokens=2, temperature=1.0, top_k=0)),
        ("top_k=1.5", dict(max_new_tokens=2, temperature=1.0, top_k=1.5)),
        ("top_p=nan", dict(max_new_tokens=2, temperature=1.0, top_p=float("nan"))),
        ("seed=-1", dict(max_new_tokens=2, temperature=1.0, seed=-1)),
        ("eos_token_id='a'", dict(max_new_tokens=2, eos_token_id="a")),
        ("past max_position_embeddings", dict(max_new_tokens=200)),
    ]:
        probe(a, label, lambda k=kw: model.generate(prompt, **k))
    for label, ids in [
        ("id = vocab", [[vocab]]),
        ("id = -1", [[-1]]),
        ("float ids", [[1.5]]),
        ("3-D ids", [[[1]]]),
        ("empty ids", [[]]),
        ("string ids", "hello"),
        ("ragged ids", [[1, 2], [3]]),
    ]:
        probe(a, f"generate({label})", lambda i=ids: model.generate(i, 2))
        probe(a, f"model({label})", lambda i=ids: model(i))


def memory():
    a = "memory"

    def set_limit(value):
        old = gk.memory.get_limit()
        try:
            gk.memory.set_limit(value)
        finally:
            gk.memory.set_limit(old)

    for value in [
        -1,
        "abc",
        "1.5.5GB",
        float("inf"),
        float("nan"),
        2**70,
        2**64,
        "1e3",
        True,
        "-5GB",
        "nanGB",
        "5 XB",
        "",
        " ",
        "0",
        1.5,
        [1],
        b"1GB",
        "1e400GB",
        "10EiB",
        "9" * 400,
        2**64 - 1,
    ]:
        probe(a, f"set_limit({_short(repr(value), 30)})", lambda v=value: set_limit(v))
    for value in [-1, "abc", 2**64, 2**70, float("nan"), "0", None, 1.5]:

        def enter(v=value):
            with gk.memory.quota(v):
                return gk.ones(2)

        probe(a, f"quota({value!r})", enter)

    def nested():
        with gk.memory.quota("1MiB"), gk.memory.quota("1GiB"):
            return gk.empty(2**21)  # past the outer quota

    probe(a, "quota 1GiB inside quota 1MiB (rust helper fixes)", nested, gk.OutOfMemoryError)


def scheduler():
    """Each probe with a scheduler of its own (shut down after it)."""
    a = "scheduler"

    def with_scheduler(fn, **kw):
        def run_it():
            sched = gk.Scheduler(**kw)
            try:
                return fn(sched)
            finally:
                sched.shutdown()

        return run_it

    for kw in [
        dict(memory=-1),
        dict(memory="abc"),
        dict(memory=2**70),
        dict(workers=0),
        dict(workers=1.5),
        dict(workers="2"),
        dict(pace_bound=-1),
        dict(pace_bound=2**70),
        dict(slice_rows=-1),
        dict(slice_rows=0),
        dict(device=1),
        dict(device="cuda"),
    ]:
        probe(a, f"Scheduler({kw})", with_scheduler(lambda s: None, **kw))
    small = dict(memory="64MiB", workers=2)
    for kw in [
        dict(qos="x"),
        dict(memory=2**70),
        dict(memory=-1),
        dict(qos="guaranteed"),
        dict(limit="1KiB", memory="1MiB"),
        dict(name=123),
        dict(admission="x"),
        dict(timeout="a"),
        dict(timeout=-1),
        dict(timeout=float("nan")),
        dict(timeout=float("inf")),
        dict(timeout=1e300),
    ]:
        probe(
            a,
            f"submit({kw})",
            with_scheduler(lambda s, k=kw: s.submit(lambda: 1, **k).result(timeout=10), **small),
        )
    probe(
        a,
        "submit(not callable)",
        with_scheduler(lambda s: s.submit(5).result(timeout=10), **small),
        TypeError,
    )

    def task(sched, **kw):
        with sched.task(**kw):
            return 1

    probe(a, "task(timeout=-0.5)", with_scheduler(lambda s: task(s, timeout=-0.5), **small))
    probe(a, "task(qos=None)", with_scheduler(lambda s: task(s, qos=None), **small), ValueError)

    def after_shutdown():
        sched = gk.Scheduler(**small)
        sched.shutdown()
        return sched.submit(lambda: 1)

    probe(a, "submit after shutdown", after_shutdown, RuntimeError)


def kernels():
    a = "kernels"
    src = 'extern "C" __global__ void k(float* x) { x[threadIdx.x] = 1.0f; }'
    probe(
        a,
        "RawKernel on the current backend",
        lambda: gk.RawKernel(src, "k")((1,), (1,), (gk.ones(1, "float32"),)),
    )
    probe(a, "RawKernel(123, 'k')", lambda: gk.RawKernel(123, "k"), TypeError)
    probe(a, "RawKernel(src, None)", lambda: gk.RawKernel(src, None), TypeError)
    probe(a, "RawKernel grid 0", lambda: gk.RawKernel(src, "k")((0,), (1,), (gk.ones(1),)))
    probe(a, "RawKernel block 2**20", lambda: gk.RawKernel(src, "k")((1,), (2**20,), (gk.ones(1),)))
    probe(
        a,
        "RawKernel args int",
        lambda: gk.RawKernel(src, "k")((1,), (1,), (5,)),
        (TypeError, gk.BackendUnavailableError),
    )
    ek = gk.ElementwiseKernel
    probe(
        a,
        "ElementwiseKernel on the current backend",
        lambda: ek("float32 x", "float32 y", "y = x * 2", "double")(gk.ones(2, "float32")),
    )
    probe(a, "ElementwiseKernel bad params", lambda: ek("float33 x", "float32 y", "y = x", "k"))
    probe(a, "ElementwiseKernel empty params", lambda: ek("", "", "", "k"))
    probe(
        a, "ElementwiseKernel params None", lambda: ek(None, "float32 y", "y = 1", "k"), TypeError
    )


def safetensors():
    a = "safetensors"
    tmp = tempfile.mkdtemp(prefix="probe-st-")
    good = os.path.join(tmp, "good.safetensors")
    gk.save_safetensors({"w": np.ones(3, np.float32)}, good)
    load, save = gk.load_safetensors, gk.save_safetensors
    probe(a, "load(None)", lambda: load(None), TypeError)
    probe(a, "load(3)", lambda: load(3), (TypeError, FileNotFoundError, gk.SafeTensorsError))
    probe(
        a,
        "load(missing)",
        lambda: load(os.path.join(tmp, "missing.safetensors")),
        FileNotFoundError,
    )
    probe(a, "load(empty folder)", lambda: load(tempfile.mkdtemp(dir=tmp)), FileNotFoundError)
    empty = os.path.join(tmp, "empty.safetensors")
    open(empty, "wb").close()
    probe(a, "load(empty file)", lambda: load(empty), gk.SafeTensorsError)
    probe(
        a,
        "load(a directory named x.safetensors)",
        lambda: load(
            os.makedirs(os.path.join(tmp, "d.safetensors")) or os.path.join(tmp, "d.safetensors")
        ),
        (FileNotFoundError, gk.SafeTensorsError),
    )
    probe(
        a, "load(index of garbage)", lambda: load(_write(tmp, "x.json", "{")), gk.SafeTensorsError
    )
    probe(
        a,
        "load(index, weight_map a list)",
        lambda: load(_write(tmp, "y.json", '{"weight_map": []}')),
        gk.SafeTensorsError,
    )
    probe(
        a,
        "load(index naming ../../etc/passwd)",
        lambda: load(_write(tmp, "z.json", '{"weight_map": {"w": "../../../etc/passwd"}}')),
        (gk.SafeTensorsError, FileNotFoundError),
    )
    probe(
        a,
        "load(device='gpu')",
        lambda: load(good, device="gpu"),
        (ValueError, gk.BackendUnavailableError),
    )
    probe(a, "load(device=1)", lambda: load(good, device=1), TypeError)
    probe(
        a,
        "load(device='cpu:1')",
        lambda: load(good, device="cpu:1"),
        (ValueError, gk.BackendUnavailableError),
    )
    probe(a, "load(dtype='int8')", lambda: load(good, dtype="int8"), TypeError)
    probe(a, "load(dtype='complex64')", lambda: load(good, dtype="complex64"), TypeError)
    probe(a, "load(dtype=3)", lambda: load(good, dtype=3), TypeError)
    probe(a, "load(/dev/null)", lambda: load("/dev/null"), gk.SafeTensorsError)
    probe(a, "load(/proc/self/status)", lambda: load("/proc/self/status"), gk.SafeTensorsError)
    probe(a, "load(/dev/zero)", lambda: load("/dev/zero"), gk.SafeTensorsError)
    out = os.path.join(tmp, "out.safetensors")
    probe(a, "save(list)", lambda: save([np.ones(2)], out), TypeError)
    probe(a, "save(None)", lambda: save(None, out), TypeError)
    probe(a, "save({'w': [1, 2]})", lambda: save({"w": [1, 2]}, out), TypeError)
    probe(a, "save({'w': 3})", lambda: save({"w": 3}, out), TypeError)
    probe(a, "save({3: array})", lambda: save({3: np.ones(2)}, out), (TypeError, ValueError))
    probe(a, "save({'': array})", lambda: save({"": np.ones(2)}, out))
    probe(a, "save(object array)", lambda: save({"w": np.array([1, None])}, out), TypeError)
    probe(a, "save(complex array)", lambda: save({"w": np.ones(2, complex)}, out), TypeError)
    probe(a, "save(metadata={'a': 1})", lambda: save({"w": np.ones(2)}, out, {"a": 1}), TypeError)
    probe(a, "save(metadata=['a'])", lambda: save({"w": np.ones(2)}, out, ["a"]), TypeError)
    probe(
        a, "save(to a folder)", lambda: save({"w": np.ones(2)}, tmp), (IsADirectoryError, OSError)
    )
    probe(
        a,
        "save(to a missing folder)",
        lambda: save({"w": np.ones(2)}, "/nonexistent/x/y.st"),
        FileNotFoundError,
    )
    probe(a, "save(path None)", lambda: save({"w": np.ones(2)}, None), TypeError)
    probe(a, "save(broadcast view)", lambda: save({"w": gk.broadcast_to(gk.ones(1), (3,))}, out))
    probe(
        a,
        "save then load a 0-size tensor",
        lambda: (save({"w": np.ones((0, 3))}, out), load(out)["w"])[1],
        lambda r: r.shape == (0, 3),
    )


def _write(folder, name, text):
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def random():
    a = "random"
    r = gk.random
    for shape in [(-1,), (2.5,), ("3",), (2**40,), (2**62, 2**62), ((2, -1),), (None,)]:
        probe(a, f"rand{shape!r}", lambda s=shape: r.rand(*s))
    probe(a, "rand() (0-d)", lambda: r.rand(), lambda v: v.shape == ())
    probe(a, "rand(dtype='int32')", lambda: r.rand(3, dtype="int32"), TypeError)
    probe(a, "rand(dtype=bfloat16)", lambda: r.rand(3, dtype=gk.bfloat16))
    probe(a, "randn(3, dtype='float16')", lambda: r.randn(3, dtype="float16"))
    for args in [
        (5, 5),
        (0, 2**70),
        (-1, 1, None, "uint8"),
        (0, 10, None, "float32"),
        (10,),
        (0,),
        (-5,),
        (1.5, 3),
        (0, 256, None, "uint8"),
        (0, 257, None, "uint8"),
        (-(2**63), 2**63 - 1),
        (0, 2**64, None, "uint64"),
        (0, 10, -1),
    ]:
        probe(a, f"randint{args!r}", lambda x=args: r.randint(*x))
    for s in [-1, 2**70, 1.5, "a", None, np.int64(3), True]:
        probe(a, f"seed({s!r})", lambda v=s: r.seed(v))
    probe(a, "uniform(1, 0)", lambda: r.uniform(1, 0, 3))
    probe(a, "uniform(nan, 1)", lambda: r.uniform(float("nan"), 1, 3))
    probe(a, "uniform('a', 1)", lambda: r.uniform("a", 1, 3), TypeError)
    probe(a, "uniform(0, 1, size=-1)", lambda: r.uniform(0, 1, -1), ValueError)
    probe(a, "normal(scale=-1)", lambda: r.normal(0, -1, 3), ValueError)
    probe(a, "normal(scale=nan)", lambda: r.normal(0, float("nan"), 3))
    probe(a, "normal(scale='a')", lambda: r.normal(0, "a", 3), TypeError)
    probe(a, "normal(size=2**64)", lambda: r.normal(0, 1, 2**64))
    probe(a, "Generator(-1)", lambda: r.Generator(-1), ValueError)
    probe(a, "Generator('x')", lambda: r.Generator("x"), TypeError)


def backends_and_interop():
    a = "backends"
    probe(
        a,
        "use_backend('bogus')",
        lambda: gk.use_backend("bogus").__enter__(),
        gk.BackendUnavailableError,
    )
    probe(
        a, "use_backend(None)", lambda: gk.use_backend(None).__enter__(), gk.BackendUnavailableError
    )
    probe(a, "use_backend('CPU')", lambda: gk.use_backend("CPU").__enter__())
    probe(a, "info()", lambda: len(str(gk.info())) > 0)
    probe(a, "from_dlpack(object())", lambda: gk.from_dlpack(object()), TypeError)
    probe(a, "from_dlpack(np.array(['a']))", lambda: gk.from_dlpack(np.array(["a"])))
    probe(a, "from_dlpack(complex)", lambda: gk.from_dlpack(np.ones(2, complex)))
    probe(
        a, "from_dlpack(read-only numpy)", lambda: gk.from_dlpack(np.broadcast_to(np.ones(1), (3,)))
    )
    probe(a, "a.__dlpack__(stream='x')", lambda: gk.ones(2).__dlpack__(stream="x"))
    probe(a, "a.__dlpack__(max_version=(9, 9))", lambda: gk.ones(2).__dlpack__(max_version=(9, 9)))
    probe(
        a,
        "__cuda_array_interface__ (cpu: absent)",
        lambda: gk.ones(2).__cuda_array_interface__,
        None if gk.backend() == "cuda" else AttributeError,
    )
    probe(a, "Stream(priority='high')", lambda: gk.Stream(priority="high"), TypeError)
    probe(a, "Stream(priority=2**40)", lambda: gk.Stream(priority=2**40), ValueError)
    probe(a, "Stream().wait_event(None)", lambda: gk.Stream().wait_event(None), TypeError)
    src = 'extern "C" __global__ void k() {}'
    probe(a, "RawKernel grid 2**32", lambda: gk.RawKernel(src, "k")((2**32,), (1,), ()), ValueError)
    probe(a, "RawKernel shared_mem -1", lambda: gk.RawKernel(src, "k")(1, 1, (), -1), ValueError)
    probe(a, "RawKernel stream='x'", lambda: gk.RawKernel(src, "k")(1, 1, (), 0, "x"), TypeError)
    probe(a, "Event().elapsed_ms(None)", lambda: gk.Event().elapsed_ms(None))
    probe(a, "jit.warmup on cpu", lambda: gk.jit.warmup())


_ONES = "import gpukit as gk; gk.ones(2)"
_INFO = "import gpukit as gk; print(gk.info())"
_BIG = "import gpukit as gk\ntry:\n    gk.ones(2**17)\nexcept gk.OutOfMemoryError:\n    pass"
# label: (variable, value, code, whether the code must succeed; else it must fail naming it)
_ENV_PROBES = [
    ("GPUKIT_BACKEND", "bogus", _ONES, False),
    ("GPUKIT_BACKEND", "cuda", _ONES, "cuda" in gk.available_backends()),
    ("GPUKIT_BACKEND", "cuda", _INFO, True),
    ("GPUKIT_BACKEND", "hip", _INFO, True),
    ("GPUKIT_BACKEND", "bogus", _INFO, True),
    ("GPUKIT_BACKEND", " CPU ", _ONES, True),
    ("GPUKIT_MEMORY_LIMIT", "abc", _ONES, False),
    ("GPUKIT_MEMORY_LIMIT", "-5", _ONES, False),
    ("GPUKIT_MEMORY_LIMIT", "9" * 23 + "GB", _ONES, False),
    ("GPUKIT_MEMORY_LIMIT", "1KiB", _BIG, True),
    ("GPUKIT_CACHE_DIR", "/dev/null/x", "import gpukit as gk; print(gk.jit.cache_info())", True),
    ("GPUKIT_CACHE_DIR", "/dev/null/x", _INFO, True),
    ("GPUKIT_NVRTC_PATH", "/nonexistent", _INFO, True),
    ("GPUKIT_HIPRTC_PATH", "/nonexistent", _INFO, True),
]


def environment():
    """Each snippet in a child process with one variable set: it must succeed, or fail with a
    last line (the error) that names the variable."""
    a = "environment"
    for name, value, code, succeeds in _ENV_PROBES:

        def child(n=name, v=value, c=code, ok=succeeds):
            env = {**os.environ, n: v}
            if n != "GPUKIT_BACKEND":
                env["GPUKIT_BACKEND"] = gk.backend()
            p = subprocess.run(
                [sys.executable, "-c", c],
                env=env,
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S * 3,
            )
            last = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
            if ok and p.returncode:
                raise RuntimeError(f"exit {p.returncode}: {last}")
            if not ok and (p.returncode == 0 or n not in last):
                raise RuntimeError(f"exit {p.returncode}, the error does not name {n}: {last}")
            return "ok" if ok else f"clean error: {last}"

        what = code.split(";")[-1].strip().splitlines()[0]
        probe(a, f"{name}={value!r:.30} then {what}", child, lambda r: True)


AREAS = {
    f.__name__: f
    for f in [
        creation,
        dtypes_and_conversions,
        elementwise,
        reductions,
        indexing,
        shapes_and_views,
        linalg,
        nn,
        models,
        generate,
        memory,
        scheduler,
        kernels,
        safetensors,
        random,
        backends_and_interop,
        environment,
    ]
}


def main(argv) -> int:
    if "--list" in argv:
        print(" ".join(AREAS))
        return 0
    wanted = argv or list(AREAS)
    for name in wanted:
        AREAS[name]()
    print(f"gpukit {gk.__version__} on backend {gk.backend()}")
    flagged, counts = [], Counter()
    for area, probes in PROBES.items():
        print(f"\n== {area} ({len(probes)} probes)")
        for label, fn, expect in probes:
            ok, outcome = run(label, fn, expect)
            counts[area, ok] += 1
            mark = "  " if ok else "!!"
            print(f"{mark} {label} -> {outcome}")
            if not ok:
                flagged.append(f"[{area}] {label} -> {outcome}")
    total = sum(counts.values())
    print(f"\n{total} probes, {len(flagged)} flagged")
    for area in PROBES:
        print(
            f"  {area}: {counts[area, True] + counts[area, False]} probes, "
            f"{counts[area, False]} flagged"
        )
    for line in flagged:
        print("!! " + line)
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
