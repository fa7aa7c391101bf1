"""gpukit.models' decode kernels on CUDA: kernels/qkv_cache.cu (the rotary embedding fused with
the KV-cache write) and kernels/sample.cu (the next token on the device)."""

from __future__ import annotations

from .. import kernels
from ..args import CONSTANTS
from ..backend import Layout
from .plans import PlanBuilder

_BLOCK = CONSTANTS["GK_BLOCK"]


def _elements(layout: Layout) -> tuple:
    return tuple(s // layout.dtype.itemsize for s in layout.strides)


def plan_qkv_cache(backend, qkv: Layout, cos, sin, length: Layout, cache: Layout,
                   q_out: Layout, hq: int, hkv: int):  # fmt: skip
    """Args: qkv, (cos, sin when given), length, k_cache, v_cache. Allocates q_out."""
    rotary = cos is not None
    b = PlanBuilder(backend, "aaaaaa" if rotary else "aaaa",
                    outputs=[q_out.size * q_out.dtype.itemsize])  # fmt: skip
    batch, s, _ = qkv.shape
    d = q_out.shape[-1]
    n = batch * s * (hq + 2 * hkv) * (d // 2)
    if n:
        fn = backend.function(*kernels.qkv_cache(qkv.dtype), "gk_qkv_cache")
        qs, cs = _elements(qkv), _elements(cache)
        fields = {
            "batch": batch,
            "s": s,
            "hq": hq,
            "hkv": hkv,
            "d": d,
            "qkv_batch_stride": qs[0],
            "qkv_seq_stride": qs[1],
            "cache_stride": cs[:3],
            "capacity": cache.shape[2],
            "positions": cos.shape[0] if rotary else 0,
            "rotary": int(rotary),
        }
        names = ("qkv", "cos", "sin", "length", "k_cache", "v_cache") if rotary else (
            "qkv", "length", "k_cache", "v_cache")  # fmt: skip
        addresses = [(name, i, 0, 1) for i, name in enumerate(names)]
        addresses.append(("q_out", b.output(0), 0, 1))
        grid = backend.blocks_for(n, _BLOCK)
        b.launch(fn, grid, _BLOCK, "gk_qkv_cache_args", fields, addresses=addresses)
    return b.build()


def plan_sample(backend, logits: Layout, next_ids: Layout, tokens: Layout):
    """Args: logits, params, length, finished, next_ids, tokens; nothing allocated."""
    b = PlanBuilder(backend, "aaaaaa")
    rows, vocab = logits.shape
    if rows and vocab:
        fn = backend.function(*kernels.sample(logits.dtype), "gk_sample")
        fields = {
            "rows": rows,
            "vocab": vocab,
            "row_stride": _elements(logits)[0],
            "ids_stride": _elements(next_ids)[0],
            "tokens_stride": _elements(tokens)[0],
            "capacity": tokens.shape[1],
        }
        names = ("logits", "params", "length", "finished", "next_ids", "tokens")
        addresses = [(name, i, 0, 1) for i, name in enumerate(names)]
        b.launch(fn, rows, _BLOCK, "gk_sample_args", fields, addresses=addresses)
    return b.build()
