"""NumPy's einsum on the matrix product.

The subscripts are parsed into one label list per operand ('...' becomes labels of its own,
aligned from the right so that they broadcast). Each operand first loses its repeated labels
(diagonals) and the labels no one else needs (sums); then pairs of operands are contracted, the
cheapest pair first (the one whose result is smallest next to its inputs), each as one batched
matrix product: shared labels that are still needed are the batch, the other shared labels the
inner dimension, each side's own labels the rows and the columns. A pair with nothing to contract
is a broadcast multiply."""

from __future__ import annotations

import math
import string

import numpy as np

from . import array_args as _args
from .array import GPUArray
from .base import dtypes as _dtypes
from .linalg import matmul
from .manipulation import _write
from .matrices import diagonal
from .statistics import sum as _sum
from .views import broadcast_to

_LETTERS = set(string.ascii_letters)
_F32 = np.dtype("float32")


def _interleaved(operands) -> tuple[str, list]:
    """einsum(a, [0, 1], b, [1, 2], [0, 2]) as a subscripts string and the arrays."""
    body, output = (operands[:-1], operands[-1]) if len(operands) % 2 else (operands, None)
    arrays, terms = list(body[0::2]), list(body[1::2])

    def letters(term) -> str:
        out = []
        for s in term:
            if s is Ellipsis:
                out.append("...")
            elif isinstance(s, (int, np.integer)) and 0 <= s < 52:
                out.append(string.ascii_letters[int(s)])
            else:
                raise ValueError(f"subscript {s!r} is not an int in [0, 52) or Ellipsis")
        return "".join(out)

    spec = ",".join(letters(t) for t in terms)
    if output is not None:
        spec += "->" + letters(output)
    return spec, arrays


def _split_term(term: str, ndim: int, ell: int) -> list:
    """The labels of one operand: its letters, and '...' as `ndim - letters` labels '0'.. that
    end at the common ellipsis width `ell` (so they line up from the right)."""
    if term.count("...") > 1 or "." in term.replace("...", ""):
        raise ValueError(f"invalid ellipsis in einstein sum subscripts {term!r}")
    for ch in term.replace("...", ""):
        if ch not in _LETTERS:
            raise ValueError(
                f"invalid subscript {ch!r} in einstein sum subscripts string, subscripts must "
                "be letters"
            )
    letters = term.replace("...", "")
    if "..." not in term:
        if len(letters) != ndim:
            raise ValueError(
                f"operand has {ndim} dimensions but subscripts {term!r} name {len(letters)}"
                + (
                    " (no '...' ellipsis to broadcast the extra dimensions)"
                    if ndim > len(letters)
                    else ""
                )
            )
        return list(letters)
    n_ell = ndim - len(letters)
    if n_ell < 0:
        raise ValueError(f"operand has {ndim} dimensions, fewer than subscripts {term!r} name")
    before, after = term.split("...")
    return [*before, *(str(ell - n_ell + i) for i in range(n_ell)), *after]


def _parse(subscripts: str, ndims: list[int]) -> tuple[list[list], list]:
    subscripts = subscripts.replace(" ", "")
    if subscripts.count("->") > 1:
        raise ValueError("einstein sum subscripts string may contain '->' only once")
    inputs, arrow, output = subscripts.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(ndims):
        raise ValueError(f"einsum: {len(terms)} subscript terms for {len(ndims)} operands")
    ell = max(
        (n - len(t.replace("...", "")) for t, n in zip(terms, ndims, strict=True) if "..." in t),
        default=0,
    )
    labels = [_split_term(t, n, ell) for t, n in zip(terms, ndims, strict=True)]
    ell_labels = [str(i) for i in range(ell)]
    if arrow:
        if any(ch not in _LETTERS for ch in output.replace("...", "")):
            raise ValueError(f"invalid output subscripts {output!r} in einstein sum")
        if "..." not in output and ell:
            raise ValueError(
                "output has more dimensions than subscripts given in einstein sum, but no '...' "
                "ellipsis provided to broadcast the extra dimensions."
            )
        out = _split_term(output, len(output.replace("...", "")) + ell, ell)
        seen = set()
        for ch in out:
            if ch in seen:
                raise ValueError(
                    f"einstein sum subscripts string includes output subscript {ch!r} multiple "
                    "times"
                )
            seen.add(ch)
            if not any(ch in lab for lab in labels):
                raise ValueError(
                    f"einstein sum subscripts string included output subscript {ch!r} which "
                    "never appeared in an input"
                )
    else:
        counts: dict = {}
        for lab in labels:
            for ch in lab:
                counts[ch] = counts.get(ch, 0) + 1
        out = ell_labels + sorted(ch for ch, c in counts.items() if c == 1 and ch in _LETTERS)
    return labels, out


def _sizes(arrays, labels) -> dict:
    """Each label's size, checked across operands (size-1 dimensions broadcast, as NumPy)."""
    sizes: dict = {}
    for a, lab in zip(arrays, labels, strict=True):
        for ch, n in zip(lab, a.shape, strict=True):
            known = sizes.get(ch, 1)
            if n != 1 and known != 1 and n != known:
                raise ValueError(
                    f"operands could not be broadcast together: subscript {ch!r} has sizes "
                    f"{known} and {n}"
                )
            sizes[ch] = max(known, n) if ch in sizes else n
    return sizes


def _reduce_alone(a: GPUArray, lab: list, needed: set) -> tuple[GPUArray, list]:
    """Diagonals for repeated labels, sums over labels nothing else needs."""
    while len(set(lab)) != len(lab):
        ch = next(c for c in lab if lab.count(c) > 1)
        i = lab.index(ch)
        j = lab.index(ch, i + 1)
        a = diagonal(a, 0, i, j)
        lab = [c for k, c in enumerate(lab) if k not in (i, j)] + [ch]
    drop = tuple(k for k, c in enumerate(lab) if c not in needed)
    if drop:
        a = _sum(a, axis=drop)
        lab = [c for c in lab if c in needed]
    return a, lab


def _arrange(a: GPUArray, lab: list, order: list, shape: dict | None = None) -> GPUArray:
    """`a` with its axes in `order` (labels it lacks become size-1 axes), broadcast to the
    sizes in `shape` where given."""
    present = [c for c in order if c in lab]
    a = a.transpose([lab.index(c) for c in present])
    own = dict(zip(present, a.shape, strict=True))
    a = a.reshape(tuple(own.get(c, 1) for c in order))
    if shape:
        a = broadcast_to(a, tuple(shape.get(c, own.get(c, 1)) for c in order))
    return a


def _contract(a, la, b, lb, keep: set):
    """The contraction of two operands as (array, labels): batch = shared labels still needed,
    inner = the other shared labels, rows / cols = each side's own labels."""
    batch = [c for c in la if c in lb and c in keep]
    inner = [c for c in la if c in lb and c not in keep]
    rows = [c for c in la if c not in lb]
    cols = [c for c in lb if c not in la]
    if not inner:  # nothing to sum: a broadcast multiply
        order = batch + rows + cols
        return _arrange(a, la, order) * _arrange(b, lb, order), order
    shared = {c: max(a.shape[la.index(c)], b.shape[lb.index(c)]) for c in batch + inner}
    a = _arrange(a, la, batch + rows + inner, shared)
    b = _arrange(b, lb, batch + inner + cols, shared)
    nb = math.prod(shared[c] for c in batch)
    k = math.prod(shared[c] for c in inner)
    head = a.shape[: len(batch) + len(rows)]
    tail = b.shape[len(batch) + len(inner) :]
    m, n = math.prod(head[len(batch) :]), math.prod(tail)
    product = matmul(a.reshape(nb, m, k), b.reshape(nb, k, n))
    return product.reshape(head + tail), batch + rows + cols


def einsum(*operands, out=None, dtype=None, optimize=False, casting="safe") -> GPUArray:
    """Einstein summation over the operands, as np.einsum (subscripts string or the interleaved
    form; '...' broadcasting; implicit output). The contraction order is gpukit's own choice
    whatever `optimize` says (the result is the same)."""
    if not operands:
        raise ValueError("einsum needs the subscripts and at least one operand")
    if isinstance(operands[0], str):
        subscripts, arrays = operands[0], list(operands[1:])
    else:
        subscripts, arrays = _interleaved(operands)
    arrays = _args.arrays(*arrays) if arrays else []
    if not arrays:
        raise ValueError("einsum needs at least one operand")
    labels, output = _parse(subscripts, [a.ndim for a in arrays])
    sizes = _sizes(arrays, labels)
    result_dtype = _dtypes.result_type(*(a.dtype for a in arrays))
    if dtype is not None:
        from .data_types import can_cast

        dtype = _dtypes.normalize(dtype)
        if casting == "safe" and not can_cast(result_dtype, dtype):
            raise TypeError(f"einsum: cannot cast {result_dtype.name} to {dtype.name} safely")
        result_dtype = dtype
    compute = _F32 if result_dtype in (_dtypes.bfloat16, np.dtype("float16")) else result_dtype
    if compute.kind == "f":
        arrays = [a.astype(compute, copy=False) for a in arrays]
    ops = []
    for i, (a, lab) in enumerate(zip(arrays, labels, strict=True)):
        others = set(output).union(*(set(lab_j) for j, lab_j in enumerate(labels) if j != i))
        ops.append(_reduce_alone(a, list(lab), others))
    while len(ops) > 1:
        i, j = _cheapest_pair(ops, output, sizes)
        (a, la), (b, lb) = ops[i], ops[j]
        rest = [o for k, o in enumerate(ops) if k not in (i, j)]
        keep = set(output).union(*(set(lab_r) for _, lab_r in rest))
        ops = [*rest[:i], _contract(a, la, b, lb, keep), *rest[i:]]
    a, lab = ops[0]
    a, lab = _reduce_alone(a, lab, set(output))
    a = a.transpose([lab.index(c) for c in output]) if output else a
    a = a.astype(result_dtype, copy=False)
    return a if out is None else _write(a, out, casting)


def _cheapest_pair(ops, output, sizes) -> tuple[int, int]:
    """The pair whose contraction result is smallest relative to its inputs (ties: leftmost)."""
    best, best_cost = (0, 1), None
    for i in range(len(ops)):
        for j in range(i + 1, len(ops)):
            rest = [o for k, o in enumerate(ops) if k not in (i, j)]
            keep = set(output).union(*(set(lab_r) for _, lab_r in rest))
            (a, la), (b, lb) = ops[i], ops[j]
            result = {c for c in la + lb if c in keep}
            cost = math.prod(sizes[c] for c in result) - a.size - b.size
            if best_cost is None or cost < best_cost:
                best, best_cost = (i, j), cost
    return best


__all__ = ["einsum"]
