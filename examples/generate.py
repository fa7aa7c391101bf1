"""Generates text from a Hugging Face model folder (config.json + SafeTensors weights) with
gpukit.models. Tokenization uses the `tokenizers` package and the folder's tokenizer.json when
both are there; otherwise pass token ids with --ids.

    python examples/generate.py MODEL_DIR --prompt "The GPU is" --max-new-tokens 32
    python examples/generate.py MODEL_DIR --ids 1,450,22796,338 --temperature 0.8 --top-p 0.9
"""

import argparse
import os
import time

import numpy as np

import gpukit as gk


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("model_dir")
    ap.add_argument("--prompt", help="text (needs the tokenizers package and tokenizer.json)")
    ap.add_argument("--ids", help="comma-separated prompt token ids")
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--temperature", type=float, default=0.0, help="0 = greedy")
    ap.add_argument("--top-k", type=int)
    ap.add_argument("--top-p", type=float)
    ap.add_argument("--dtype", help="convert the weights, e.g. bfloat16 or float32")
    ap.add_argument("--seed", type=int)
    args = ap.parse_args()

    tokenizer = None
    tokenizer_file = os.path.join(args.model_dir, "tokenizer.json")
    if args.prompt is not None:
        try:
            from tokenizers import Tokenizer
        except ImportError:
            raise SystemExit(
                "--prompt needs the tokenizers package (pip install tokenizers); or pass --ids"
            ) from None
        if not os.path.exists(tokenizer_file):
            raise SystemExit(f"{tokenizer_file} not found; pass --ids instead")
        tokenizer = Tokenizer.from_file(tokenizer_file)
        ids = tokenizer.encode(args.prompt).ids
    elif args.ids:
        ids = [int(t) for t in args.ids.split(",")]
    else:
        raise SystemExit("give --prompt or --ids")

    print(f"backend: {gk.backend()}")
    try:
        model = gk.models.from_pretrained(args.model_dir, dtype=args.dtype)
    except (OSError, ValueError, TypeError, NotImplementedError) as e:  # a bad model folder
        raise SystemExit(f"generate.py: {e}") from None
    start = time.perf_counter()
    out = model.generate(
        np.array([ids]),
        args.max_new_tokens,
        temperature=args.temperature,
        top_k=args.top_k,
        top_p=args.top_p,
        seed=args.seed,
    )[0]
    elapsed = time.perf_counter() - start
    new = out[len(ids) :]
    print(tokenizer.decode(out.tolist()) if tokenizer else " ".join(map(str, out)))
    rate = len(new) / elapsed
    print(f"{len(new)} new tokens in {elapsed:.2f} s ({rate:.1f} tokens/s incl. prefill)")


if __name__ == "__main__":
    main()
