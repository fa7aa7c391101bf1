"""Regression tests for inputs found wrong by probing (scripts/probe_inputs.py,
notes/reliability.md): each gives NumPy's result or a clear exception of a sensible type naming
what was wrong. Every backend."""

import enum
import json
import warnings

import numpy as np
import pytest
from conftest import assert_matches

import gpukit as gk


# --- NumPy scalars and Python ints ----------------------------------------------------------------
@pytest.mark.parametrize(
    "scalar", [np.mean([1.0, 2.0]), np.float64(2.5), np.float32(0.5), np.int64(3), np.bool_(True)]
)
def test_numpy_scalars_are_operands(backend, scalar):
    x = np.arange(3.0)
    assert_matches(gk.asarray(x) - scalar, x - scalar)
    assert_matches(scalar * gk.asarray(x), scalar * x)
    assert_matches(gk.maximum(gk.asarray(x), scalar), np.maximum(x, scalar))


def test_int_and_float_subclasses_are_their_values(backend):
    class Two(enum.IntEnum):
        TWO = 2

    assert_matches(gk.arange(3) * Two.TWO, np.arange(3) * 2)


@pytest.mark.parametrize(
    "dtype,value", [("uint8", 300), ("uint8", -1), ("int8", -129), ("int32", 2**31)]
)
def test_python_int_out_of_the_dtype_raises_overflow_error(backend, dtype, value):
    a = gk.ones(3, dtype)
    with pytest.raises(OverflowError, match=f"{value} out of bounds for {dtype}"):
        a + value
    with pytest.raises(OverflowError, match=f"{value} out of bounds"):
        gk.multiply(value, a)


@pytest.mark.parametrize("op", ["equal", "not_equal", "less", "less_equal", "greater"])
@pytest.mark.parametrize("value", [-1, 256, 2**70, -(2**70)])
def test_comparisons_with_ints_beyond_the_dtype_are_exact(backend, op, value):
    x = np.array([0, 1, 254, 255], np.uint8)
    for args, ref in (((gk.asarray(x), value), (x, value)), ((value, gk.asarray(x)), (value, x))):
        assert_matches(getattr(gk, op)(*args), getattr(np, op)(*ref))


def test_clip_bounds_beyond_the_dtype(backend):
    x = np.array([-128, -3, 0, 5, 127], np.int8)
    assert_matches(gk.clip(gk.asarray(x), -1000, 1000), np.clip(x, -1000, 1000))
    assert_matches(gk.clip(gk.asarray(x), -1000, 1), np.clip(x, -1000, 1))


def test_float_ops_take_ints_past_int64(backend):
    x = np.ones(3, np.float32)
    assert_matches(gk.asarray(x) + 2**70, x + 2**70)
    with pytest.raises(OverflowError):
        gk.asarray(x) + 10**400


def test_in_place_casting_is_checked_before_shapes(backend):
    a = gk.zeros(2, bool)
    with pytest.raises(TypeError, match="same_kind"):
        a += gk.zeros(0, "int8")  # NumPy: the cast fails first, though the shapes do too


# --- read-only broadcast views ------------------------------------------------------------------
def test_broadcast_views_are_read_only(backend):
    a = gk.arange(3.0)
    b = gk.broadcast_to(a[None], (4, 3))
    for write in (
        lambda: b.__setitem__((0, 0), 5),
        lambda: b.__setitem__(0, gk.ones(3)),
        lambda: b.__setitem__(([0, 1], [0, 0]), 5),  # advanced indexing
        lambda: b[1].__setitem__(..., 7),  # a view of the view
        lambda: b.T.__setitem__(0, 1),
        lambda: gk.add(a, 1, out=b),
        lambda: b.__iadd__(1),
    ):
        with pytest.raises(ValueError, match="read-only"):
            write()
    np.testing.assert_array_equal(a.to_numpy(), [0.0, 1.0, 2.0])
    assert_matches(b + 1, np.broadcast_to(np.arange(3.0) + 1, (4, 3)))  # reading works
    c = b.copy()
    c[0, 0] = 5  # a copy is writable
    assert c.to_numpy()[0, 0] == 5
    d = a[None]  # a stride-0 axis of length 1 is an ordinary view
    d[0, 1] = 9
    assert a.to_numpy()[1] == 9


# --- joins and views ------------------------------------------------------------------------------
def test_concatenate_axis_none_flattens(backend):
    x, y = np.arange(6.0).reshape(2, 3), np.arange(2, dtype=np.int32)
    assert_matches(
        gk.concatenate([gk.asarray(x), gk.asarray(y)], axis=None), np.concatenate([x, y], None)
    )
    assert_matches(
        gk.concatenate([gk.asarray(np.float32(2))], axis=None), np.array([2], np.float32)
    )


def test_ascontiguousarray_is_at_least_1d(backend):
    assert_matches(gk.ascontiguousarray(gk.asarray(np.float32(3))), np.array([3], np.float32))


# --- shapes, sizes, axes --------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(2**62,), (2**40, 2**40), (2**62, 2**62), 2**64])
def test_huge_shapes_are_too_big_not_an_overflow(backend, shape):
    with pytest.raises(ValueError, match="array is too big"):
        gk.empty(shape)
    with pytest.raises(ValueError, match="array is too big"):
        gk.random.normal(0, 1, shape)


def test_huge_arange_and_eye(backend):
    with pytest.raises(ValueError, match="array is too big"):
        gk.arange(1e20)
    with pytest.raises(ValueError, match="array is too big"):
        gk.eye(2**40)
    with pytest.raises(ValueError, match="arange"):
        gk.arange(float("nan"))
    with pytest.raises(TypeError, match="bool"):
        gk.arange(5, dtype=bool)


def test_at_most_64_dimensions(backend):
    with pytest.raises(ValueError, match="at most 64 dimensions"):
        gk.ones((1,) * 65)
    deep = np.ones((1,) * 40)
    assert_matches(gk.asarray(deep) + gk.asarray(deep), deep + deep)  # NumPy's own: 32
    assert_matches(gk.ones((1,) * 64) * 2, np.full((1,) * 64, 2.0))


def test_creation_defaults_and_fill_values(backend):
    assert_matches(gk.zeros(3, dtype=None), np.zeros(3))
    assert_matches(gk.ones(3, dtype=None), np.ones(3))
    assert_matches(gk.full((2, 3), [1, 2, 3]), np.full((2, 3), [1, 2, 3]))
    assert_matches(gk.full((2, 2), gk.arange(2.0)), np.full((2, 2), np.arange(2.0)))
    assert_matches(gk.zeros_like([[1, 2]]), np.zeros_like([[1, 2]]))
    assert_matches(gk.ones_like(np.zeros(2, np.float32)), np.ones(2, np.float32))
    with pytest.raises(TypeError, match="to_numpy takes a GPUArray"):
        gk.to_numpy(np.ones(2))
    with pytest.raises(TypeError, match="num must be an int"):
        gk.linspace(0, 1, 2.5)


def test_iteration(backend):
    with pytest.raises(TypeError, match="0-d"):
        iter(gk.ones(()))
    rows = list(gk.arange(6.0).reshape(2, 3))
    assert len(rows) == 2
    assert_matches(rows[1], np.arange(3.0, 6.0))


def test_axis_arguments_name_the_problem(backend):
    x = gk.arange(24.0).reshape(2, 3, 4)
    with pytest.raises(TypeError, match="axis must be an int"):
        x.sum(axis=1.5)
    with pytest.raises(TypeError, match="cumsum takes one axis"):
        x.cumsum(axis=(0, 1))
    with pytest.raises(TypeError, match="concatenate takes one axis"):
        gk.concatenate([x, x], axis=(0, 1))
    with pytest.raises(TypeError, match="axis must be an int"):
        x.swapaxes(0, 1.5)
    with pytest.raises(TypeError, match="axis must be"):
        gk.expand_dims(x, 1.5)
    assert gk.expand_dims(x, np.int64(0)).shape == (1, 2, 3, 4)
    with pytest.raises(TypeError):
        x.transpose("a", 1, 0)
    with pytest.raises(np.exceptions.AxisError):
        x.transpose(0, 1, 5)
    with pytest.raises(ValueError, match="duplicate value in axis"):
        x.transpose(0, 0, 1)
    with pytest.raises(ValueError, match="permutation"):
        x.transpose(0, 1)
    with pytest.raises(TypeError, match="reshape takes ints"):
        x.reshape(2.5)
    with pytest.raises(TypeError, match="ddof must be a number"):
        x.var(ddof="1")


def test_slices_with_huge_steps(backend):
    x = np.arange(12.0).reshape(3, 4)
    assert_matches(gk.asarray(x)[:: 2**70, :: -(2**70)], x[:: 2**70, :: -(2**70)])


# --- models -------------------------------------------------------------------------------------
def _model_folder(tmp_path, rng, **config):
    from model_reference import LLAMA, write_model

    write_model(str(tmp_path), LLAMA, rng)
    raw = {**LLAMA, **config}
    (tmp_path / "config.json").write_text(json.dumps(raw))
    return str(tmp_path)


@pytest.mark.parametrize(
    "config,match",
    [
        ({"num_attention_heads": 0}, "num_attention_heads must be an integer >= 1"),
        ({"num_attention_heads": 3}, "not a multiple of num_attention_heads"),
        ({"num_key_value_heads": 3}, "not a multiple of num_key_value_heads"),
        ({"hidden_size": "big"}, "hidden_size must be an integer"),
        ({"vocab_size": -1}, "vocab_size must be an integer >= 1"),
        ({"rms_norm_eps": "x"}, "rms_norm_eps must be a finite non-negative number"),
        ({"rope_theta": 0}, "rope_theta must be a positive number"),
        ({"rope_scaling": "linear"}, "rope_scaling must be an object"),
        ({"rope_scaling": {"rope_type": "magic"}}, "rope scaling 'magic' is not supported"),
        ({"rope_scaling": {"rope_type": "linear", "factor": 0}}, "factor must be a positive"),
        ({"rope_scaling": {"rope_type": "llama3", "factor": 8}}, "original_max_position"),
        ({"model_type": ["llama"]}, "model_type"),
        ({"head_dim": 0}, "head_dim must be an integer >= 1"),
        ({"vocab_size": 10}, "embed_tokens.weight' has shape .* config.json's sizes make it"),
        ({"intermediate_size": 40}, "gate_proj.weight' has shape"),
    ],
)
def test_bad_config_values_name_the_key(backend, rng, tmp_path, config, match):
    with pytest.raises(ValueError, match=match):
        gk.models.from_pretrained(_model_folder(tmp_path, rng, **config), progress=False)


@pytest.mark.parametrize("text", ["[]", '"llama"', "null", b"\xff\xfe"])
def test_config_json_that_is_not_an_object(backend, tmp_path, text):
    path = tmp_path / "config.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ValueError, match=r"config\.json"):
        gk.models.from_pretrained(str(tmp_path), progress=False)


def test_gpt2_with_no_heads(backend, tmp_path):
    (tmp_path / "config.json").write_text(
        '{"model_type": "gpt2", "vocab_size": 4, "n_embd": 8, "n_layer": 1, "n_head": 0, '
        '"n_positions": 8}'
    )
    with pytest.raises(ValueError, match="n_head must be an integer >= 1"):
        gk.models.from_pretrained(str(tmp_path), progress=False)


def test_a_file_is_not_a_model_folder(backend, tmp_path):
    path = tmp_path / "model.txt"
    path.write_text("x")
    with pytest.raises(NotADirectoryError, match="not a folder"):
        gk.models.from_pretrained(str(path))


def test_generate_and_call_arguments(backend, rng, tmp_path):
    model = gk.models.from_pretrained(_model_folder(tmp_path, rng), progress=False)
    prompt = np.array([[1, 2, 3]])
    with pytest.raises(ValueError, match="max_new_tokens must be >= 0"):
        model.generate(prompt, -1)
    with pytest.raises(TypeError, match="max_new_tokens must be an int"):
        model.generate(prompt, 1.5)
    with pytest.raises(ValueError, match="temperature"):
        model.generate(prompt, 2, temperature=float("nan"))
    with pytest.raises(TypeError):
        model.generate(prompt, 2, temperature=1.0, top_k=1.5)
    with pytest.raises(TypeError, match="eos_token_id must be an int"):
        model.generate(prompt, 2, eos_token_id="a")
    for ids in ([[1.5]], [[True]], "hello"):
        with pytest.raises(TypeError, match="input_ids must be integers"):
            model.generate(ids, 2)
        with pytest.raises(TypeError, match="input_ids must be integers"):
            model(ids)
    with pytest.raises(ValueError, match="seq >= 1"):
        model([[]])
    np.testing.assert_array_equal(model.generate(prompt, 0), prompt)


# --- memory, kernels, streams, nn, random, SafeTensors ------------------------------------------
@pytest.mark.parametrize("size", [2**64, 2**70, "9" * 23 + "GB", "9" * 400])
def test_memory_sizes_past_64_bits(backend, size):
    limit = gk.memory.get_limit()
    with pytest.raises(OverflowError, match=r"limit|more than 2"):
        gk.memory.set_limit(size)
    with pytest.raises(OverflowError, match=r"limit|more than 2"), gk.memory.quota(size):
        pass
    assert gk.memory.get_limit() == limit


def test_kernel_arguments_are_checked_when_made():
    with pytest.raises(TypeError, match="source must be a str"):
        gk.RawKernel(123, "k")
    with pytest.raises(TypeError, match="name must be a str"):
        gk.RawKernel("", None)
    with pytest.raises(TypeError, match="parameters must be a str"):
        gk.ElementwiseKernel(None, "float32 y", "y = 1", "k")
    with pytest.raises(TypeError, match="options must be strings"):
        gk.RawKernel("", "k", options=(1,))


def test_raw_kernel_launch_arguments_are_checked_first(backend):
    k = gk.RawKernel('extern "C" __global__ void k() {}', "k")
    for grid, block, shared, match in [
        ((0,), (1,), 0, "positive"),
        ((2**32,), (1,), 0, "below 2\\*\\*32"),
        ((1, 1, 1, 1), (1,), 0, "1 to 3 ints"),
        ((1,), (1,), -1, "shared_mem"),
        ((1,), (1,), 2**32, "shared_mem"),
    ]:
        with pytest.raises(ValueError, match=match):
            k(grid, block, (), shared_mem=shared)
    with pytest.raises(TypeError, match="stream must be"):
        k((1,), (1,), (), stream="default")


def test_event_elapsed_takes_an_event(backend):
    with pytest.raises(TypeError, match="the end Event"):
        gk.Event().elapsed_ms(None)
    with pytest.raises(TypeError, match="priority must be an int"):
        gk.Stream(priority="high")
    with pytest.raises(ValueError, match="32-bit"):
        gk.Stream(priority=2**40)
    with pytest.raises(TypeError, match="takes an Event"):
        gk.Stream().wait_event(None)


def test_nn_numbers_are_numbers(backend):
    x = gk.ones((2, 4), "float32")
    with pytest.raises(TypeError, match="eps must be a real number"):
        gk.nn.layer_norm(x, eps="a")
    with pytest.raises(TypeError, match="eps must be a real number"):
        gk.nn.rms_norm(x, eps=None)
    q = gk.ones((1, 1, 2, 4), "float32")
    with pytest.raises(TypeError, match="scale must be a real number"):
        gk.nn.scaled_dot_product_attention(q, q, q, scale="a")


def test_rope_cache_arguments(backend):
    with pytest.raises(TypeError):
        gk.nn.rope_cache(2.5, 8)
    with pytest.raises(ValueError, match="base must be a positive number"):
        gk.nn.rope_cache(4, 8, base=0)


def test_random_arguments(backend):
    with pytest.raises(TypeError, match="shape must be"):
        gk.random.rand(2.5)
    with pytest.raises(TypeError, match="bfloat16"):
        gk.random.rand(3, dtype=gk.bfloat16)
    with pytest.raises(TypeError, match="scale must be a real number"):
        gk.random.normal(0, "a", 3)
    with pytest.raises(TypeError, match="low must be a real number"):
        gk.random.uniform("a", 1, 3)


def test_save_safetensors_argument_types(backend, tmp_path):
    path = tmp_path / "x.safetensors"
    with pytest.raises(TypeError, match="tensors must map names to arrays"):
        gk.save_safetensors([np.ones(2)], path)
    with pytest.raises(TypeError, match="must be a GPUArray or a NumPy array"):
        gk.save_safetensors({"w": [1, 2]}, path)
    with pytest.raises(TypeError, match="metadata must map str to str"):
        gk.save_safetensors({"w": np.ones(2)}, path, ["a"])
    assert not path.exists()


def test_an_index_cannot_reach_outside_its_folder(backend, tmp_path):
    outside = tmp_path / "outside.safetensors"
    gk.save_safetensors({"w": np.ones(2)}, outside)
    folder = tmp_path / "model"
    folder.mkdir()
    for shard in ("../outside.safetensors", str(outside)):
        (folder / "model.safetensors.index.json").write_text(
            json.dumps({"weight_map": {"w": shard}})
        )
        with pytest.raises(gk.SafeTensorsError, match="outside the index's folder"):
            gk.load_safetensors(folder)


# --- environment ----------------------------------------------------------------------------------
def _run(code, **env):
    import os
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "GPUKIT_BACKEND": "cpu", **env},
        timeout=120,
    )


@pytest.mark.parametrize("value", ["abc", "-5", "9" * 23 + "GB"])
def test_a_bad_memory_limit_variable_is_named(value):
    r = _run("import gpukit as gk; gk.ones(2)", GPUKIT_MEMORY_LIMIT=value)
    assert r.returncode == 1
    assert f"GPUKIT_MEMORY_LIMIT={value!r}" in r.stderr.strip().splitlines()[-1]


def test_info_reports_a_forced_backend_that_does_not_open():
    missing = [n for n in ("cuda", "hip") if n not in gk.available_backends()]
    if not missing:
        pytest.skip("every GPU backend opens here")
    r = _run("import gpukit as gk; print(gk.info())", GPUKIT_BACKEND=missing[0])
    assert r.returncode == 0, r.stderr
    assert "none:" in r.stdout and f"GPUKIT_BACKEND={missing[0]} but" in r.stdout


def test_shape_dtype_and_strides_cannot_break_the_layout(backend):
    x = gk.arange(6.0)
    with pytest.raises(ValueError, match="cannot reshape"):
        x.shape = (12,)  # would read past the buffer (it crashed the process)
    with pytest.raises(AttributeError):
        x.strides = (800,)
    with pytest.raises(AttributeError):
        x.dtype = np.dtype("complex128")
    with pytest.raises(AttributeError, match="in-place"):
        x.reshape(2, 3).T.shape = (6,)
    x.shape = (2, 3)  # in place where no copy is needed, as NumPy
    assert_matches(x, np.arange(6.0).reshape(2, 3))


def test_integer_fills_are_checked_as_numpy_does(backend):
    with pytest.raises(ValueError, match="NaN"):
        gk.full(3, float("nan"), "int32")
    with pytest.raises(OverflowError, match="infinity"):
        gk.full(3, float("inf"), "int64")
    with pytest.raises(OverflowError, match="300 out of bounds for uint8"):
        gk.full(3, 300, "uint8")
    a = gk.arange(4, dtype="int16")
    with pytest.raises(ValueError, match="NaN"):
        a[0] = float("nan")
    with pytest.raises(OverflowError, match="out of bounds"):
        a[1:] = 2**20
    assert_matches(a, np.arange(4, dtype=np.int16))  # nothing written
    assert_matches(gk.full(2, 2**64 - 1, "uint64"), np.full(2, 2**64 - 1, np.uint64))
    assert_matches(gk.full(2, 2.7, "int32"), np.full(2, 2.7).astype(np.int32))


def test_float_errors_give_values_not_warnings(backend):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # as the GPU: IEEE results, no RuntimeWarning
        x = gk.asarray(np.array([-1.0, 0.0, 1.0]))
        assert_matches(x / 0, np.array([-np.inf, np.nan, np.inf]))
        assert_matches(gk.log(x), np.array([np.nan, -np.inf, 0.0]))
        assert_matches(gk.full(2, 1e6).astype("float16"), np.full(2, np.inf, np.float16))
        assert_matches(gk.arange(3, dtype="int8") // 0, np.zeros(3, np.int8))
