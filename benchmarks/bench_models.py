"""Decoding a ~1.1B-parameter LLaMA-shaped model with random weights (TinyLlama's shape) in
bfloat16: gpukit.models (captured decode steps, and the same steps run eagerly) against
transformers (eager, and its static-cache compiled path in a child process whose time is
bounded), same checkpoint, same run. Needs torch and transformers (the GPU machine has both).

Rows: decode tokens/s at batch 1 and 8, (NEW - 1) / (t(NEW) - t(1)) of whole generate calls
(prefill and fixed costs cancel); the same figure with the prefill included, NEW / t(NEW), for
the static-cache path (one cache shape, one compile); prefill of 1 x 512 tokens (a forward over
the prompt, logits of every position); greedy tokens equal to transformers' for 32 steps; a
captured chain of 100 small ops, replay time per op against the same ops run eagerly (and a
torch CUDA graph of the same ops); the weight-read limit of the GPU (bytes of the weights over
the device-to-device copy bandwidth measured here).

Per-token breakdown: GPU time of each part of one decode step, measured with CUDA events
recorded between the parts while the step is queued behind a spin kernel (the GPU then runs the
step's kernels back to back, so an interval is the part's kernels alone, not the host's launch
gaps), summed over the layers; beside it the captured step's time per token. Prints the tables
and writes bench_models.json ($OUT or the working directory).
"""

import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from _common import write_json

import gpukit as gk

PROMPT, NEW, GREEDY_STEPS, PREFILL = 16, 64, 32, 512
STATIC_TIMEOUT_S = 240  # transformers' static-cache child process, compile included
CHAIN_OPS = 100

SPIN = r"""
extern "C" __global__ void spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {
    }
}
"""

STATIC_CHILD = r"""
import json, sys, time
import torch, transformers
folder, batch, prompt_len, new = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
torch.manual_seed(0)
hf = transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.bfloat16).cuda().eval()
ids = torch.randint(0, hf.config.vocab_size, (batch, prompt_len), device="cuda")
def run():
    with torch.no_grad():
        hf.generate(ids, max_new_tokens=new, min_new_tokens=new, do_sample=False, pad_token_id=0,
                    cache_implementation="static")
    torch.cuda.synchronize()
start = time.perf_counter()
run()
first = time.perf_counter() - start
times = []
for _ in range(3):
    start = time.perf_counter()
    run()
    times.append(time.perf_counter() - start)
print("RESULT " + json.dumps({"tokens_per_s": new / min(times), "first_call_s": first}))
"""


def _time(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def decode_tokens_per_s(generate) -> float:
    """(NEW - 1) / (t(NEW) - t(1)): tokens per second of the decode steps alone."""
    generate(NEW)  # warm: kernels compiled, the decode steps captured, memory cached
    generate(1)
    t1 = min(_time(lambda: generate(1)) for _ in range(3))
    tn = min(_time(lambda: generate(NEW)) for _ in range(3))
    return (NEW - 1) / (tn - t1)


def tokens_per_s_with_prefill(generate) -> float:
    generate(NEW)
    return NEW / min(_time(lambda: generate(NEW)) for _ in range(3))


def static_cache_tokens_per_s(folder: str, batch: int):
    """transformers' static-cache path in a child process (its compile time bounded): (tokens/s
    including prefill, first call's seconds) or the reason it was skipped."""
    cmd = [sys.executable, "-c", STATIC_CHILD, folder, str(batch), str(PROMPT), str(NEW)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=STATIC_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"skipped: over {STATIC_TIMEOUT_S} s (compile included)"
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            found = json.loads(line[7:])
            return found["tokens_per_s"], found["first_call_s"]
    tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
    return f"skipped: failed ({tail[0][:160]})"


def hf_greedy(hf, prompt):
    """transformers' greedy tokens after the prompt, and its logits at every step."""
    import torch

    with torch.no_grad():
        out = hf.generate(torch.from_numpy(prompt).cuda(), max_new_tokens=GREEDY_STEPS,
                          attention_mask=torch.ones(prompt.shape, dtype=torch.long).cuda(),
                          min_new_tokens=GREEDY_STEPS, do_sample=False, pad_token_id=0,
                          output_scores=True, return_dict_in_generate=True)  # fmt: skip
    return out.sequences.cpu().numpy()[0, PROMPT:], out.scores


def greedy_agreement(tokens, reference) -> dict:
    """Steps of greedy decoding where `tokens` equal the reference's (from the start), and the
    reference's top-2 logit margin at the first difference; reference = hf_greedy(...)."""
    ref_tokens, scores = reference
    agree = int(np.argmin(np.append(tokens == ref_tokens, False)))
    margin = None
    if agree < GREEDY_STEPS:
        second, best = np.sort(scores[agree][0].float().cpu().numpy())[-2:]
        margin = float(best - second)
    return {"steps": GREEDY_STEPS, "equal": agree, "margin_at_first_diff": margin}


def copy_bandwidth() -> float:
    """Device-to-device copy bandwidth (bytes read + written per second), for the weight-read
    limit."""
    a = gk.empty(1 << 28, "uint8")
    b = gk.empty(1 << 28, "uint8")
    for _ in range(3):
        b[...] = a
    gk.synchronize()
    start = gk.Event()
    end = gk.Event()
    start.record()
    for _ in range(10):
        b[...] = a
    end.record()
    end.synchronize()
    return 2 * 10 * a.nbytes / (start.elapsed_ms(end) * 1e-3)


def chain(x):
    for _ in range(CHAIN_OPS // 2):
        x = x * 1.0001
        x = x + 0.5
    return x


def chain_per_op_us(torch):
    x = gk.ones(1024, "float32")
    for _ in range(3):
        chain(x)
    gk.synchronize()
    iters = 50
    start = time.perf_counter()
    for _ in range(iters):
        chain(x)
    gk.synchronize()
    eager = (time.perf_counter() - start) / (iters * CHAIN_OPS) * 1e6
    g = gk.graph(chain, x)
    for _ in range(5):
        g.replay()
    gk.synchronize()
    iters = 500
    start = time.perf_counter()
    for _ in range(iters):
        g.replay()
    gk.synchronize()
    replay = (time.perf_counter() - start) / (iters * CHAIN_OPS) * 1e6
    ours = (g.nodes, replay, eager)
    t = torch.ones(1024, device="cuda")
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        chain(t)
    torch.cuda.current_stream().wait_stream(stream)
    tg = torch.cuda.CUDAGraph()
    with torch.cuda.graph(tg):
        chain(t)
    for _ in range(5):
        tg.replay()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(iters):
        tg.replay()
    torch.cuda.synchronize()
    return ours, (time.perf_counter() - start) / (iters * CHAIN_OPS) * 1e6


def step_breakdown(model, state, spin, cycles: int, runs: int = 5) -> dict:
    """GPU microseconds of each part of one decode step (see the module's documentation)."""
    per_run = []
    for _ in range(runs):
        events: list = []
        spin((1,), (1,), (np.int64(cycles),))
        _mark(events, "advance+mask")
        state.cache.advance_device(1)
        logits = model.forward_step(
            state.next_ids, state.cache, trace=lambda part, ev=events: _mark(ev, part)
        )
        _mark(events, "sample")
        state.sample(logits)
        _mark(events, "end")
        events[-1][1].synchronize()
        totals: dict = {}
        for (part, a), (_, b) in itertools.pairwise(events):
            totals[part] = totals.get(part, 0.0) + a.elapsed_ms(b) * 1e3
        per_run.append(totals)
    return {p: statistics.median(r[p] for r in per_run) for p in per_run[0]}


def _mark(events: list, part: str) -> None:
    e = gk.Event()
    e.record()
    events.append((part, e))


def graph_step_us(state, steps: int = 200) -> float:
    for _ in range(3):
        state.graph.replay()
    start = gk.Event()
    end = gk.Event()
    start.record()
    for _ in range(steps):
        state.graph.replay()
    end.record()
    end.synchronize()
    return start.elapsed_ms(end) * 1e3 / steps


def main():
    try:
        import torch
        import transformers
    except ImportError:
        print("bench_models: needs torch and transformers; skipped")
        return
    if gk.backend() != "cuda" or not torch.cuda.is_available():
        print(f"bench_models: needs the cuda backend (have {gk.backend()}); skipped")
        return
    dtype = "bfloat16"
    tdtype = getattr(torch, dtype)
    config = transformers.LlamaConfig(
        vocab_size=32000,
        hidden_size=2048,
        intermediate_size=5632,
        num_hidden_layers=22,
        num_attention_heads=32,
        num_key_value_heads=4,
        max_position_embeddings=2048,
        bos_token_id=None,
        eos_token_id=None,
    )
    folder = tempfile.mkdtemp(prefix="gpukit-bench-llama-")
    results: dict = {"device": gk.info().get("device")}
    try:
        torch.manual_seed(0)
        with torch.device("cuda"):
            hf = transformers.AutoModelForCausalLM.from_config(config, dtype=tdtype).eval()
        params = sum(p.numel() for p in hf.parameters())
        hf.save_pretrained(folder)
        size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
        weight_bytes = sum(p.numel() * p.element_size() for p in hf.parameters())

        start = time.perf_counter()
        ours = gk.models.from_pretrained(folder, progress=False)
        gk.synchronize()
        load_s = time.perf_counter() - start
        rng = np.random.default_rng(0)
        rows = {}
        for batch in (1, 8):
            prompt = rng.integers(0, config.vocab_size, size=(batch, PROMPT))
            tp = torch.from_numpy(prompt).cuda()

            def hf_generate(n, tp=tp):
                with torch.no_grad():
                    out = hf.generate(
                        tp, max_new_tokens=n, min_new_tokens=n, do_sample=False, pad_token_id=0
                    )
                torch.cuda.synchronize()
                return out

            def graphed(n, prompt=prompt):
                return ours.generate(prompt, n)

            def eager(n, prompt=prompt):
                return ours.generate(prompt, n, graph=False)

            rows[batch] = {
                "gpukit_graph": decode_tokens_per_s(graphed) * batch,
                "gpukit_eager": decode_tokens_per_s(eager) * batch,
                "transformers_eager": decode_tokens_per_s(hf_generate) * batch,
                "gpukit_graph_with_prefill": tokens_per_s_with_prefill(graphed) * batch,
            }
            static = static_cache_tokens_per_s(folder, batch)
            if isinstance(static, tuple):
                rows[batch]["transformers_static_with_prefill"] = static[0] * batch
                rows[batch]["transformers_static_first_call_s"] = static[1]
            else:
                rows[batch]["transformers_static"] = static
        results["decode"] = rows

        # Prefill: a forward over 1 x 512 tokens into an empty cache, logits of every position.
        long_prompt = rng.integers(0, config.vocab_size, size=(1, PREFILL))
        tl = torch.from_numpy(long_prompt).cuda()
        cache = ours.new_cache(1, PREFILL)

        def ours_prefill():
            cache.reset()
            ours.forward(long_prompt, cache, last_only=False)
            gk.synchronize()

        def hf_prefill():
            with torch.no_grad():
                hf(tl)
            torch.cuda.synchronize()

        for fn in (ours_prefill, hf_prefill):
            fn()
        results["prefill_ms"] = {
            "gpukit": min(_time(ours_prefill) for _ in range(5)) * 1e3,
            "transformers": min(_time(hf_prefill) for _ in range(5)) * 1e3,
        }

        # Greedy tokens against transformers', in bfloat16 and (the same checkpoint) float32: a
        # random model's top logits are close, and where two are within bfloat16's rounding the
        # order of the sums decides; float32 shows whether the decode itself agrees.
        # The bar itself: transformers against transformers, the same bfloat16 weights with its
        # eager attention instead of SDPA (two valid orders of the same sums).
        prompt = rng.integers(0, config.vocab_size, size=(1, PROMPT))
        reference = hf_greedy(hf, prompt)
        results["greedy"] = greedy_agreement(ours.generate(prompt, GREEDY_STEPS)[0, PROMPT:],
                                             reference)  # fmt: skip
        hf_eager = transformers.AutoModelForCausalLM.from_pretrained(
            folder, dtype=tdtype, attn_implementation="eager"
        ).cuda().eval()  # fmt: skip
        results["greedy_hf_eager_attention"] = greedy_agreement(
            hf_greedy(hf_eager, prompt)[0], reference
        )
        del ours, hf_eager
        hf32 = hf.float()
        ours32 = gk.models.from_pretrained(folder, dtype="float32", progress=False)
        results["greedy_float32"] = greedy_agreement(
            ours32.generate(prompt, GREEDY_STEPS)[0, PROMPT:], hf_greedy(hf32, prompt)
        )
        del ours32, hf32
        hf = None
        ours = gk.models.from_pretrained(folder, progress=False)

        # 100 small ops: a captured graph against eager launches.
        (nodes, replay_us, eager_us), torch_us = chain_per_op_us(torch)
        results["chain"] = {
            "ops": CHAIN_OPS,
            "nodes": nodes,
            "replay_us_per_op": replay_us,
            "eager_us_per_op": eager_us,
            "torch_graph_us_per_op": torch_us,
        }

        # The per-token breakdown (batch 1).
        ours.generate(prompt, 8)
        state = ours.decode_state(1, PROMPT + 8)
        spin = gk.RawKernel(SPIN, "spin")
        parts = step_breakdown(ours, state, spin, cycles=60_000_000)
        step = graph_step_us(state)
        results["breakdown_us"] = {
            "parts": parts,
            "sum_of_parts": sum(parts.values()),
            "graph_step": step,
            "graph_nodes": state.graph.nodes,
        }
        bandwidth = copy_bandwidth()
        results["weights"] = {
            "bytes": weight_bytes,
            "copy_bandwidth_GBps": bandwidth / 1e9,
            "read_limit_tokens_per_s": bandwidth / weight_bytes,
        }
        results["load_GBps"] = size / load_s / 1e9
        _report(results, params, dtype)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    write_json("bench_models", results)


def _report(r: dict, params: int, dtype: str) -> None:
    def fmt(v):
        return f"{v:10.1f}" if isinstance(v, float) else f"{v!s:>10s}"

    print(f"\nbackend: cuda, LLaMA-shaped model, {params / 1e9:.2f}B parameters, {dtype}")
    limit = r["weights"]["read_limit_tokens_per_s"]
    print(f"weight-read limit at batch 1: {limit:.0f} tokens/s "
          f"({r['weights']['bytes'] / 1e9:.2f} GB of weights, copy bandwidth "
          f"{r['weights']['copy_bandwidth_GBps']:.0f} GB/s)")  # fmt: skip
    head = f"{'decode (tokens/s)':34s} {'gpukit':>10s} {'eager':>10s} {'hf eager':>10s}"
    print(head + f" {'hf static*':>10s} {'gpukit*':>10s}")
    for batch, row in r["decode"].items():
        static = row.get("transformers_static_with_prefill", row.get("transformers_static"))
        print(f"{f'batch {batch}':34s} {fmt(row['gpukit_graph'])} {fmt(row['gpukit_eager'])} "
              f"{fmt(row['transformers_eager'])} {fmt(static)} "
              f"{fmt(row['gpukit_graph_with_prefill'])}")  # fmt: skip
    print(
        "  (* tokens/s including the 16-token prefill: the static-cache path runs one cache "
        "shape only, to compile once)"
    )
    p = r["prefill_ms"]
    print(f"{'prefill 1 x 512 (ms)':34s} {fmt(p['gpukit'])} {'':>10s} {fmt(p['transformers'])}")
    for key, label in (
        ("greedy", "gpukit, bfloat16"),
        ("greedy_hf_eager_attention", "transformers with eager attention, bfloat16"),
        ("greedy_float32", "gpukit, float32"),
    ):
        g, margin = r[key], r[key]["margin_at_first_diff"]
        there = "" if margin is None else f" (transformers' top-2 margin there: {margin:.4f})"
        print(f"greedy tokens equal to transformers' ({label}): {g['equal']}/{g['steps']}{there}")
    c = r["chain"]
    print(f"captured {c['ops']}-op chain ({c['nodes']} nodes): replay {c['replay_us_per_op']:.2f} "
          f"us/op, eager {c['eager_us_per_op']:.2f} us/op, torch CUDA graph "
          f"{c['torch_graph_us_per_op']:.2f} us/op")  # fmt: skip
    b = r["breakdown_us"]
    print(
        f"\nper-token breakdown, batch 1 (GPU us per token; events between parts, the step "
        f"queued behind a spin kernel; {b['graph_nodes']} kernels in the captured step)"
    )
    total = b["sum_of_parts"]
    for part, us in sorted(b["parts"].items(), key=lambda kv: -kv[1]):
        print(f"  {part:16s} {us:9.1f} {100 * us / total:6.1f}%")
    print(f"  {'sum of parts':16s} {total:9.1f}")
    print(f"  {'captured step':16s} {b['graph_step']:9.1f}  (replayed back to back)")
    print(json.dumps(r["breakdown_us"]))


if __name__ == "__main__":
    main()
