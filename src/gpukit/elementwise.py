"""Elementwise functions with NumPy's names, broadcasting and type promotion, and the operators
of GPUArray, all from the op table (gpukit.runtime.ops). Each takes GPUArrays or Python scalars
and an optional `out` array.

A repeated call is a dictionary hit on its kind (op, operand dtypes, shapes, strides, scalar
types) and one call of the backend's plan, which allocates the result and launches."""

from __future__ import annotations

import math

import numpy as np

from .array import GPUArray, desc_of, describe, empty, fill, layout, operands, wrap
from .base import dtypes, scalars, shapes
from .runtime.backend import Layout
from .runtime.ops import ELEMENTWISE, NUMPY
from .runtime.quota import local as _quota

# (plan, shape, dtype, strides, check, result's Desc) by kind of call: the op, then per operand
# its Desc (runtime, dtype, shape, strides; see gpukit.array) or a scalar's type. `check` (see
# _checks) looks at the values that the kind does not fix, or is None.
_ENTRIES: dict = {}
_MAX_ENTRIES = 4096
_new = object.__new__


def _key(name, ops) -> tuple:
    return (name, *(describe(x) if type(x) is GPUArray else type(x) for x in ops))


def _resolve(op, ops) -> tuple[np.dtype, np.dtype]:
    """(loop dtype, result dtype) of `op` on these operands, by its rule."""
    loop, dtype = dtypes.resolve(
        op.rule, *(x.dtype if isinstance(x, GPUArray) else x for x in ops), name=op.name
    )
    if op.real_only and loop.kind == "c":
        raise TypeError(f"{op.name} is not defined for complex numbers")
    return loop, dtype


def _describe(op, ops):
    """(loop dtype, result dtype, broadcast shape) of an elementwise call."""
    loop, dtype = _resolve(op, ops)
    return loop, dtype, shapes.broadcast(*(x.shape for x in ops if isinstance(x, GPUArray)))


def _inputs(ops) -> tuple:
    return tuple(layout(x) if isinstance(x, GPUArray) else type(x) for x in ops)


def _args(ops) -> list:
    args = []
    for x in ops:
        if isinstance(x, GPUArray):
            args += (x._buf, x._offset)
        else:
            args.append(x)
    return args


def _checks(op, loop, ops, size: int):
    """None, or check(operands) -> the operands to launch with, or a bool that is the whole
    answer (a comparison with an int beyond the dtype): Python ints against the loop dtype, as
    NumPy checks them (gpukit.base.scalars), and integers to negative integer powers (NumPy
    checks exponents per element, so an empty result raises nothing)."""
    ints = scalars.policy(op.name, loop, ops)
    power = op.name == "power" and loop.kind in "iu" and size > 0
    if ints is None and not power:
        return None

    def check(ops):
        if ints is not None:
            ops = ints(ops)
            if type(ops) is bool:
                return ops
        if power:
            _check_integer_power(ops[1])
        return ops

    return check


def _new_entry(key, op, rt, ops):
    loop, dtype, shape = _describe(op, ops)
    strides = shapes.contiguous_strides(shape, dtype.itemsize)
    plan = rt.plan_elementwise(op, loop, _inputs(ops), Layout(dtype, shape, strides), True)
    check = _checks(op, loop, ops, math.prod(shape))
    entry = (plan, shape, dtype, strides, check, desc_of(rt, dtype, shape, strides))
    if len(_ENTRIES) >= _MAX_ENTRIES:
        _ENTRIES.clear()
    _ENTRIES[key] = entry
    return entry


def _check_integer_power(exponent) -> None:
    """NumPy refuses integers to negative integer powers (the kernel would give 0): one look at
    the smallest exponent (and a wait), only for signed integer exponents."""
    if isinstance(exponent, GPUArray):
        signed = exponent.dtype.kind == "i" and exponent.size
        negative = signed and exponent.to_numpy().min() < 0
    else:
        negative = exponent < 0
    if negative:
        raise ValueError("Integers to negative integer powers are not allowed.")


def elementwise(ufunc_name: str, *operands_, out: GPUArray | None = None) -> GPUArray:
    """NumPy's ufunc `ufunc_name` with broadcasting; operands are GPUArrays or Python scalars.
    With `out`, the result is written there (cast as NumPy's "same_kind" rule allows)."""
    try:
        op = ELEMENTWISE[ufunc_name]
    except KeyError:
        raise ValueError(f"no elementwise op named {ufunc_name!r}") from None
    if len(operands_) != op.arity:
        raise TypeError(f"{ufunc_name} takes {op.arity} operands, got {len(operands_)}")
    if out is not None and _planned_into(ufunc_name, operands_, out):
        return out
    ops, rt = operands(*operands_)
    if out is not None:
        return _into(op, ops, rt, out)
    key = _key(ufunc_name, ops)
    plan, shape, dtype, strides, check, desc = _ENTRIES.get(key) or _new_entry(key, op, rt, ops)
    if check is not None:
        ops = check(ops)
        if type(ops) is bool:  # the same answer everywhere
            out = empty(shape, np.dtype(bool), rt)
            fill(out, ops)
            return out
    buf = plan(rt.thread.stream, _quota.quota, *_args(ops))
    return wrap(buf, shape, dtype, strides, rt, desc)


def _planned_into(name, ops, out) -> bool:
    """Runs `name` over ops into out, and says so, when a call of the same kind (operands and
    out) was planned before, needs no look at values, and reads no operand that shares out's
    memory in another order; else _into decides (and plans)."""
    if type(out) is not GPUArray or out._readonly:
        return False
    d_out, buf = out._desc or describe(out), out._buf
    key, args = ["into", name], []
    for x in ops:
        t = type(x)
        if t is GPUArray:
            d = x._desc or describe(x)
            if x._buf is buf and (d is not d_out or x._offset != out._offset):
                return False
            key.append(d)
            args += (x._buf, x._offset)
        elif t is float or t is int or t is bool:
            key.append(t)
            args.append(x)
        else:
            return False
    key.append(d_out)
    entry = _ENTRIES.get(tuple(key))
    if entry is None or entry[1] is not None:
        return False
    entry[0](out._rt.thread.stream, _quota.quota, *args, buf, out._offset)
    return True


def _into(op, ops, rt, out: GPUArray) -> GPUArray:
    if not isinstance(out, GPUArray):
        raise TypeError(f"out must be a GPUArray, not {type(out).__name__}")
    if out._rt is not rt:
        raise ValueError(f"arrays are on different devices: out is on {out.device}")
    out.check_writable()
    key = ("into", *_key(op.name, ops), describe(out))
    entry = _ENTRIES.get(key)
    if entry is None:
        # NumPy's order: the casting is checked before the shapes.
        loop, dtype = _resolve(op, ops)
        if not dtypes.can_cast_same_kind(dtype, out.dtype):
            raise TypeError(
                f"{op.name}: cannot cast the {dtype.name} result to out's "
                f"{out.dtype.name} (same_kind casting)"
            )
        shape = shapes.broadcast(*(x.shape for x in ops if isinstance(x, GPUArray)))
        if shapes.broadcast(shape, out.shape) != out.shape:
            raise ValueError(
                f"{op.name}: result of shape {shape} does not fit out of shape {out.shape}"
            )
        plan = rt.plan_elementwise(op, loop, _inputs(ops), layout(out), False)
        entry = _ENTRIES[key] = (plan, _checks(op, loop, ops, out.size))
    plan, check = entry
    if check is not None:
        ops = check(ops)
        if type(ops) is bool:
            fill(out, ops)
            return out
    # An input that shares out's memory but walks it differently would read what this very
    # operation already wrote: compute into a temporary first, as NumPy does.
    for x in ops:
        if (
            type(x) is GPUArray
            and x._buf is out._buf
            and (x._offset, x.shape, x.strides) != (out._offset, out.shape, out.strides)
        ):
            out[...] = elementwise(op.name, *ops)
            return out
    plan(rt.thread.stream, _quota.quota, *_args(ops), out._buf, out._offset)
    return out


def _operator(name: str):
    """a <op> b: one dictionary hit on the kind of call and the plan when it was seen before."""

    def forward(a, b):
        t = type(b)
        if t is GPUArray:
            entry = _ENTRIES.get((name, a._desc or describe(a), b._desc or describe(b)))
        elif t is float or t is int or t is bool:
            entry = _ENTRIES.get((name, a._desc or describe(a), t))
        else:
            return elementwise(name, a, b)
        if entry is None or entry[4]:
            return elementwise(name, a, b)
        rt = a._rt
        if t is GPUArray:
            buf = entry[0](rt.thread.stream, _quota.quota, a._buf, a._offset, b._buf, b._offset)
        else:
            buf = entry[0](rt.thread.stream, _quota.quota, a._buf, a._offset, b)
        out = _new(GPUArray)
        out._buf, out._offset, out._rt, out._desc, out._readonly = buf, 0, rt, entry[5], False
        out._shape, out._dtype, out._strides = entry[1], entry[2], entry[3]
        return out

    forward.__name__ = name
    return forward


def _reflected(name: str):
    """b <op> a, for a scalar or array-like b."""

    def reflected(a, b):
        t = type(b)
        if t is float or t is int or t is bool:
            entry = _ENTRIES.get((name, t, a._desc or describe(a)))
            if entry is not None and not entry[4]:
                rt = a._rt
                buf = entry[0](rt.thread.stream, _quota.quota, b, a._buf, a._offset)
                return wrap(buf, entry[1], entry[2], entry[3], rt, entry[5])
        return elementwise(name, b, a)

    return reflected


# --- NumPy's functions and GPUArray's operators, from the op table -------------------------------
def _function(op):
    if op.arity == 1:

        def f(x, out: GPUArray | None = None) -> GPUArray:
            return elementwise(op.name, x, out=out)

    else:

        def f(x, y, out: GPUArray | None = None) -> GPUArray:
            return elementwise(op.name, x, y, out=out)

    f.__name__ = f.__qualname__ = op.name
    f.__doc__ = op.doc
    return f


def where(condition, x, y, out: GPUArray | None = None) -> GPUArray:
    if isinstance(condition, GPUArray) and condition.dtype != bool:
        condition = elementwise("not_equal", condition, 0)
    return elementwise("where", condition, x, y, out=out)


def clip(x, /, min=None, max=None, out=None, *, a_min=None, a_max=None) -> GPUArray:
    if a_min is not None:
        if min is not None:
            raise TypeError("clip: pass a_min or min, not both")
        min = a_min
    if a_max is not None:
        if max is not None:
            raise TypeError("clip: pass a_max or max, not both")
        max = a_max
    if min is None and max is None:  # nothing to limit: a copy
        (x,), _ = operands(x)
        if not isinstance(x, GPUArray):
            raise TypeError("clip needs an array when both bounds are None")
        if out is None:
            return x.copy()
        if out.shape != x.shape or not dtypes.can_cast_same_kind(x.dtype, out.dtype):
            raise ValueError(f"clip: out of {out.shape} {out.dtype} does not fit x of {x.shape}")
        out[...] = x
        return out
    if min is None:
        return elementwise("minimum", x, max, out=out)
    if max is None:
        return elementwise("maximum", x, min, out=out)
    return elementwise("clip", x, min, max, out=out)


where.__doc__ = ELEMENTWISE["where"].doc
clip.__doc__ = ELEMENTWISE["clip"].doc


def divmod(x, y, out: tuple | None = None) -> tuple[GPUArray, GPUArray]:
    """(x // y, x % y) elementwise, with broadcasting (NumPy's divmod); `out`: a pair of arrays
    to write them into."""
    if out is None:
        return elementwise("floor_divide", x, y), elementwise("remainder", x, y)
    if not isinstance(out, tuple) or len(out) != 2:
        raise TypeError("divmod: out must be a tuple of two arrays")
    return elementwise("floor_divide", x, y, out=out[0]), elementwise("remainder", x, y, out=out[1])


def angle(z, deg: bool = False) -> GPUArray:
    result = elementwise("angle", z)
    return elementwise("multiply", result, 180 / math.pi, out=result) if deg else result


angle.__doc__ = ELEMENTWISE["angle"].doc
FUNCTIONS = {"where": where, "clip": clip, "divmod": divmod}
for _op in ELEMENTWISE.values():
    if _op.namespace == NUMPY and _op.arity <= 2:
        FUNCTIONS[_op.name] = _function(_op)
        for _alias in _op.aliases:
            FUNCTIONS[_alias] = FUNCTIONS[_op.name]
FUNCTIONS["angle"] = angle  # with np.angle's deg=
globals().update(FUNCTIONS)


def _install_operators():
    def unary(name):
        return lambda self: elementwise(name, self)

    def in_place(name):
        def iop(self, other):
            if _planned_into(name, (self, other), self):
                return self
            return elementwise(name, self, other, out=self)

        return iop

    for op in ELEMENTWISE.values():
        if op.dunder is None:
            continue
        if op.arity == 1:
            setattr(GPUArray, f"__{op.dunder}__", unary(op.name))
            continue
        setattr(GPUArray, f"__{op.dunder}__", _operator(op.name))
        if op.reflected:
            setattr(GPUArray, f"__r{op.dunder}__", _reflected(op.name))
            setattr(GPUArray, f"__i{op.dunder}__", in_place(op.name))
    GPUArray.__hash__ = None  # == compares elementwise, as in NumPy
    GPUArray.__divmod__ = lambda self, other: divmod(self, other)
    GPUArray.__rdivmod__ = lambda self, other: divmod(other, self)


_install_operators()

__all__ = sorted(FUNCTIONS)
