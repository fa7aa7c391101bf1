"""Decode speed of a ~1.1B-parameter LLaMA-shaped model with random weights (TinyLlama's shape)
in bfloat16: gpukit.models against transformers, same checkpoint, same run. Needs torch and
transformers (the GPU machine has both) to write the checkpoint."""

import os
import shutil
import tempfile
import time

import numpy as np

import gpukit as gk

PROMPT, NEW = 16, 64


def decode_tokens_per_s(generate) -> float:
    """Tokens per second of the decode steps alone: (NEW - 1) / (t(NEW) - t(1))."""
    generate(2)  # warm up: kernels compiled, allocations cached
    t1 = min(_time(lambda: generate(1)) for _ in range(2))
    tn = min(_time(lambda: generate(NEW)) for _ in range(2))
    return (NEW - 1) / (tn - t1)


def _time(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


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
    try:
        torch.manual_seed(0)
        with torch.device("cuda"):
            hf = transformers.AutoModelForCausalLM.from_config(config, dtype=tdtype).eval()
        params = sum(p.numel() for p in hf.parameters())
        hf.save_pretrained(folder)
        size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))

        start = time.perf_counter()
        ours = gk.models.from_pretrained(folder, progress=False)
        gk.synchronize()
        load_s = time.perf_counter() - start
        prompt = np.random.default_rng(0).integers(0, config.vocab_size, size=(1, PROMPT))

        def ours_generate(n):
            return ours.generate(prompt, n)

        tp = torch.from_numpy(prompt).cuda()

        def hf_generate(n):
            with torch.no_grad():
                out = hf.generate(
                    tp, max_new_tokens=n, min_new_tokens=n, do_sample=False, pad_token_id=0
                )
            torch.cuda.synchronize()
            return out

        ours_tps = decode_tokens_per_s(ours_generate)
        hf_tps = decode_tokens_per_s(hf_generate)
        ours_tokens, hf_tokens = ours_generate(16)[0], hf_generate(16).cpu().numpy()[0]
        agree = int(np.argmin(np.append(ours_tokens == hf_tokens, False)))
        with torch.no_grad():
            hf_logits = hf(tp).logits[0, -1].float().cpu().numpy()
        ours_logits = ours(prompt).astype("float32").to_numpy()[0, -1]
        second, best = np.sort(hf_logits)[-2:]
        print(f"\nbackend: cuda, LLaMA-shaped model, {params / 1e9:.2f}B parameters, {dtype}")
        print(f"{'measure':44s} {'gpukit':>10s} {'transformers':>12s}")
        print(f"{'decode, batch 1 (tokens/s)':44s} {ours_tps:10.1f} {hf_tps:12.1f}")
        print(f"{'load from page cache to GPU (GB/s)':44s} {size / load_s / 1e9:10.2f}")
        label = "weights read per token at that rate (GB/s)"
        print(f"{label:44s} {ours_tps * size / 1e9:10.1f} {hf_tps * size / 1e9:12.1f}")
        print(
            f"prompt's last logits: max |gpukit - transformers| "
            f"{np.abs(ours_logits - hf_logits).max():.4f} (logits std {hf_logits.std():.3f}, "
            f"transformers' top-2 margin {best - second:.4f})"
        )
        print(f"greedy tokens equal to transformers' for the first {agree} of {len(hf_tokens)}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
