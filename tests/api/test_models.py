"""gpukit.models: logits against float64 NumPy references of each family (CI) and against
transformers (where it is installed, e.g. the GPU machine); the KV cache and sampling."""

import numpy as np
import pytest
from conftest import TOLERANCE, assert_matches
from model_reference import GPT2, LLAMA, MISTRAL, QWEN2, gpt2_logits, llama_logits, write_model

import gpukit as gk

FAMILIES = {"llama": LLAMA, "qwen2": QWEN2, "mistral": MISTRAL, "gpt2": GPT2}


def _model(tmp_path, rng, family, dtype="float32"):
    cfg = FAMILIES[family]
    weights = write_model(str(tmp_path), cfg, rng, dtype)
    return cfg, weights, gk.models.from_pretrained(str(tmp_path), progress=False)


def _reference(cfg, weights, ids):
    return (gpt2_logits if cfg["model_type"] == "gpt2" else llama_logits)(cfg, weights, ids)


@pytest.mark.parametrize("family", FAMILIES)
def test_logits_match_numpy_reference(backend, rng, tmp_path, family):
    cfg, weights, model = _model(tmp_path, rng, family)
    ids = rng.integers(0, cfg["vocab_size"], size=(2, 9))  # past mistral's window of 5
    assert_matches(model(ids), _reference(cfg, weights, ids).astype(np.float32), scale=50)


@pytest.mark.parametrize("family", ["llama", "gpt2"])
def test_float16_checkpoint(backend, rng, tmp_path, family):
    cfg, weights, model = _model(tmp_path, rng, family, "float16")
    ids = rng.integers(0, cfg["vocab_size"], size=(1, 7))
    assert_matches(model(ids), _reference(cfg, weights, ids).astype(np.float16), scale=20)


@pytest.mark.parametrize("family", FAMILIES)
def test_cache_continues_a_sequence(backend, rng, tmp_path, family):
    cfg, _, model = _model(tmp_path, rng, family)
    ids = rng.integers(0, cfg["vocab_size"], size=(2, 11))
    full = model(ids).to_numpy()
    cache = model.new_cache(2, capacity=4)  # grows twice on the way
    parts = [model(ids[:, :6], cache), model(ids[:, 6:7], cache), model(ids[:, 7:], cache)]
    chunked = np.concatenate([p.to_numpy() for p in parts], axis=1)
    np.testing.assert_allclose(chunked, full, rtol=1e-4, atol=1e-4)
    assert cache.length == 11


@pytest.mark.parametrize("family", ["llama", "gpt2"])
def test_greedy_generate_is_argmax_of_full_forward(backend, rng, tmp_path, family):
    cfg, _, model = _model(tmp_path, rng, family)
    prompt = rng.integers(0, cfg["vocab_size"], size=(2, 5))
    out = model.generate(prompt, max_new_tokens=6)
    assert out.shape == (2, 11) and out.dtype == np.int64
    np.testing.assert_array_equal(out[:, :5], prompt)
    logits = model(out[:, :-1]).to_numpy()
    np.testing.assert_array_equal(out[:, 5:], logits[:, 4:].argmax(-1))
    one = model.generate(prompt[0], max_new_tokens=6)
    np.testing.assert_array_equal(one, out[0])


def test_sampling(backend, rng, tmp_path):
    cfg, _, model = _model(tmp_path, rng, "llama")
    prompt = rng.integers(0, cfg["vocab_size"], size=(3, 4))
    greedy = model.generate(prompt, 5)
    np.testing.assert_array_equal(model.generate(prompt, 5, temperature=0.7, top_k=1), greedy)
    np.testing.assert_array_equal(model.generate(prompt, 5, temperature=1.0, top_p=1e-9), greedy)
    a = model.generate(prompt, 8, temperature=1.5, seed=3)
    np.testing.assert_array_equal(a, model.generate(prompt, 8, temperature=1.5, seed=3))
    assert a.min() >= 0 and a.max() < cfg["vocab_size"]
    eos = int(greedy[0, 4])
    stopped = model.generate(prompt, 5, eos_token_id=eos)
    assert (stopped[0, 5:] == eos).all()
    with pytest.raises(ValueError, match="top_p"):
        model.generate(prompt, 2, temperature=1.0, top_p=1.5)
    with pytest.raises(ValueError, match="input_ids"):
        model.generate(np.zeros((1, 0), dtype=np.int64), 2)


def test_bad_model_folders(backend, rng, tmp_path):
    with pytest.raises(FileNotFoundError, match=r"config\.json"):
        gk.models.from_pretrained(str(tmp_path))
    write_model(str(tmp_path), {**LLAMA, "model_type": "bert"}, rng)
    with pytest.raises(ValueError, match="bert"):
        gk.models.from_pretrained(str(tmp_path), progress=False)
    cfg = {**LLAMA, "num_hidden_layers": 3}  # the checkpoint has two layers
    write_model(str(tmp_path), LLAMA, rng)
    (tmp_path / "config.json").write_text(__import__("json").dumps(cfg))
    with pytest.raises(ValueError, match=r"layers\.2"):
        gk.models.from_pretrained(str(tmp_path), progress=False)


# --- against transformers (installed on the GPU machine, not in CI) -------------------------------


def _hf_model(family, tmp_path):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    common = dict(vocab_size=128, hidden_size=64, intermediate_size=96, num_hidden_layers=2)
    common |= dict(num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
    configs = {
        "llama": lambda: transformers.LlamaConfig(**common, tie_word_embeddings=False),
        "qwen2": lambda: transformers.Qwen2Config(**common, tie_word_embeddings=True),
        "mistral": lambda: transformers.MistralConfig(**common, sliding_window=6),
        "gpt2": lambda: transformers.GPT2Config(
            vocab_size=128, n_embd=64, n_layer=2, n_head=4, n_positions=64
        ),
    }
    config = configs[family]()
    config.attn_implementation = "eager"
    config.bos_token_id = config.eos_token_id = None  # generate runs the full length
    model = transformers.AutoModelForCausalLM.from_config(config).eval()
    with torch.no_grad():  # non-trivial norms and biases, as trained models have
        for name, p in model.named_parameters():
            if "norm" in name or "ln_" in name or name.endswith("bias"):
                p.add_(0.1 * torch.randn_like(p))
    try:
        model.save_pretrained(tmp_path, safe_serialization=True)
    except TypeError:  # transformers versions that always write SafeTensors
        model.save_pretrained(tmp_path)
    assert list(tmp_path.glob("*.safetensors")), "transformers wrote no SafeTensors file"
    return torch, model


def _decode_logits(model, sequence, prompt_len):
    """The last-position logits that model.generate computes at each step when it produces
    `sequence` (1, prompt_len + steps): the same calls on the same KV cache, so the same bits."""
    cache = model.new_cache(1, sequence.shape[1] + 1)  # generate's capacity
    steps = [sequence[:, :prompt_len]] + [
        sequence[:, i : i + 1] for i in range(prompt_len, sequence.shape[1])
    ]
    return [
        model.forward(gk.asarray(ids), cache, last_only=True).to_numpy()[0, -1].astype(np.float64)
        for ids in steps
    ]


@pytest.mark.parametrize("family", FAMILIES)
def test_matches_transformers(backend, rng, tmp_path, family):
    torch, hf = _hf_model(family, tmp_path)
    ours = gk.models.from_pretrained(str(tmp_path), dtype="float32", progress=False)
    ids = rng.integers(0, 128, size=(2, 10))
    with torch.no_grad():
        ref = hf(torch.from_numpy(ids)).logits.double().numpy()
    tol = TOLERANCE[np.dtype("float32")] * 50
    assert_matches(ours(ids), ref.astype(np.float32), scale=50)
    prompt = rng.integers(0, 128, size=(1, 5))
    with torch.no_grad():
        hf_out = hf.generate(
            torch.from_numpy(prompt),
            attention_mask=torch.ones(prompt.shape, dtype=torch.long),  # else 0s (pad) are masked
            max_new_tokens=8,
            do_sample=False,
            pad_token_id=0,
            output_scores=True,
            return_dict_in_generate=True,
        )
    tokens, hf_tokens = ours.generate(prompt, 8), hf_out.sequences.numpy()
    ours_steps = _decode_logits(ours, hf_tokens[:, :-1], prompt.shape[1])
    # Greedy tokens agree wherever the reference's best logit leads the second by more than
    # twice the largest difference between the two models' logits at that step (measured, not
    # assumed: float32 rounding differs between the implementations and between devices). At
    # the first step where it does not, either token is a right greedy choice and the two
    # continuations may part, so the comparison ends there.
    for step, scores in enumerate(hf_out.scores):
        reference = scores[0].double().numpy()
        np.testing.assert_allclose(ours_steps[step], reference, rtol=tol, atol=tol, err_msg=step)
        error = np.abs(ours_steps[step] - reference).max()
        second, best = np.sort(reference)[-2:]
        if best - second <= 2 * error:
            break
        assert tokens[0, 5 + step] == hf_tokens[0, 5 + step], (step, tokens, hf_tokens)
        assert np.argmax(ours_steps[step]) == tokens[0, 5 + step]  # the logits generate saw
