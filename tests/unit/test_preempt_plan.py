"""The preemptible form of best-effort products on CUDA without a GPU (issue 17): the plans
runtime/cuda/preempt.py builds for a stand-in sm_90 device (the kernel's preemptible build, K
never split, the words each launch watches, the counter and output slots, the tiles), and the
launches and control-word reads of one call."""

import threading

import numpy as np
import pytest
from test_gemm_plan import FakeBackend, _dense, _field, built  # noqa: F401

from gpukit import _core
from gpukit.base.dtypes import bfloat16
from gpukit.runtime.args import CONSTANTS, arg_struct
from gpukit.runtime.cuda import gemm_plan, preempt

C = CONSTANTS
WORDS = 0x7F0000001000  # the stand-in device's preemption words
BF = np.dtype(bfloat16)


class PreemptBackend(FakeBackend):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.device.has_stream_memops = True
        self.device.preempt_flags = WORDS


def test_the_words_are_the_kernels_and_the_schedulers():
    assert C["GK_PREEMPT_SLOTS"] == _core.PREEMPT_SLOTS == preempt.SLOTS == 4


def test_each_launch_is_the_preemptible_gemm_watching_its_words(built):  # noqa: F811
    be = PreemptBackend()
    a, b = _dense(BF, (256, 8200)), _dense(BF, (8200, 520))  # a product plan_matmul splits
    plan = preempt.plan_preemptible_matmul(be, a, b, _dense(BF, (256, 520)), None)
    assert isinstance(plan, preempt.PreemptiblePlan)
    assert plan.out_bytes == 256 * 520 * 2 and plan.relaunches == preempt.RELAUNCHES
    s = arg_struct("gk_gemm_sm90_args")
    watched = []
    for built_plan in (plan.yielding, plan.finishing):
        assert built_plan.outputs == [] and built_plan.scratch == []
        ((fn, grid, _, _, blob, slots),) = built_plan.launches
        file, defines, name = be.functions[fn - 1]
        assert (file, name) == ("gemm_sm90.cu", "gk_gemm_sm90") and "GK_GEMM_PREEMPT=1" in defines
        assert _field(blob, "gk_gemm_sm90_args", "splits", 0x130) == 1
        total = _field(blob, "gk_gemm_sm90_args", "total_tiles", 0x130)
        assert plan.tiles == total
        assert grid[0] == plan.grid == min(total, 132)
        # One save slot of fp32 accumulators per block, of the tile the launch takes.
        bm = int(next(d for d in defines if d.startswith("GK_GEMM_BM=")).split("=")[1])
        bn = int(next(d for d in defines if d.startswith("GK_GEMM_BN=")).split("=")[1])
        assert plan.save_bytes == plan.grid * bm * bn * 4
        watched.append(_field(blob, "gk_gemm_sm90_args", "preempt", 0x130))
        addresses = {
            o - 0x130: (arg, align) for kind, o, arg, _, align in slots if kind == "address"
        }
        # The caller's a, b, then the output (element-aligned: the kernel's epilogue takes vector
        # stores where the address allows), the control words and the save area.
        assert addresses == {
            s.offset("out"): (2, 2),
            s.offset("next_tile"): (3, 4),
            s.offset("save"): (4, 16),
        }
    # The yielding launches watch the words; the last one watches words never raised.
    assert watched == [WORDS, WORDS + 4 * C["GK_PREEMPT_SLOTS"]]


def test_the_check_interval_is_the_launchs_field(built):  # noqa: F811
    a, b, out = _dense(BF, (512, 1024)), _dense(BF, (1024, 768)), _dense(BF, (512, 768))
    for every, expected in ((None, C["GK_PREEMPT_EVERY"]), (1, 1), (3, 3)):
        kw = {} if every is None else {"every": every}
        plan = preempt.plan_preemptible_matmul(PreemptBackend(), a, b, out, None, **kw)
        for built_plan in (plan.yielding, plan.finishing):
            ((_, _, _, _, blob, _),) = built_plan.launches
            assert _field(blob, "gk_gemm_sm90_args", "preempt_every", 0x130) == expected
    with pytest.raises(ValueError, match="at least 1"):
        preempt.plan_preemptible_matmul(PreemptBackend(), a, b, out, None, every=0)


def test_the_check_interval_fills_the_args_padding():
    # preempt_every sits in what was the struct's tail padding: the plain build's parameter
    # block keeps its size and every other field its offset.
    s = arg_struct("gk_gemm_sm90_args")
    assert s.offset("preempt_every") == s.offset("b_batched") + 4
    assert s.size == s.offset("preempt_every") + 4 == 152


def test_epilogue_args_come_before_the_output_and_counter(built):  # noqa: F811
    be = PreemptBackend()
    a, b, out = _dense(BF, (512, 1024)), _dense(BF, (1024, 768)), _dense(BF, (512, 768))
    plan = preempt.plan_preemptible_matmul(be, a, b, out, _dense(BF, (768,)), "silu",
                                           _dense(BF, (512, 768)))  # fmt: skip
    ((fn, _, _, _, blob, slots),) = plan.yielding.launches
    assert "GK_EPI_ACT=GK_ACT_SILU" in be.functions[fn - 1][1]
    s = arg_struct("gk_gemm_sm90_args")
    addresses = {o - 0x130: arg for kind, o, arg, *_ in slots if kind == "address"}
    assert addresses == {s.offset("bias"): 2, s.offset("residual"): 3, s.offset("out"): 4,
                         s.offset("next_tile"): 5, s.offset("save"): 6}  # fmt: skip
    assert _field(blob, "gk_gemm_sm90_args", "sr_m", 0x130) == 768


def test_products_without_a_preemptible_form_say_so(built):  # noqa: F811
    a, b, out = _dense(BF, (512, 1024)), _dense(BF, (1024, 768)), _dense(BF, (512, 768))
    assert preempt.plan_preemptible_matmul(PreemptBackend(cc=(8, 0), sm90a=False), a, b, out,
                                           None) is None  # fmt: skip
    no_memops = PreemptBackend()
    no_memops.device.has_stream_memops = False
    assert preempt.plan_preemptible_matmul(no_memops, a, b, out, None) is None
    f32 = np.dtype("float32")
    assert (
        preempt.plan_preemptible_matmul(
            PreemptBackend(),
            _dense(f32, (512, 64)),
            _dense(f32, (64, 64)),
            _dense(f32, (512, 64)),
            None,
        )
        is None
    )
    # A residual the epilogue cannot read in place (broadcast along n) is not fused: no form.
    from gpukit.runtime.backend import Layout

    res = Layout(BF, (512, 768), (2, 0), 16)
    assert preempt.plan_preemptible_matmul(PreemptBackend(), a, b, out, None, None, res) is None


class Recorder:
    """A backend whose device and pool record what a preemptible call does; each read of the
    control words gives the next (tiles taken, saved tiles waiting) of `taken`."""

    def __init__(self, taken=()):
        self.log = []
        rec, self._taken = self, list(taken)

        class Device:
            preempt_flags = WORDS

            def write_value(self, stream, address, value):
                rec.log.append(("write", stream, address, value))

        class Pool:
            def allocate(self, nbytes, stream, quota):
                rec.log.append(("allocate", nbytes))
                return f"buffer{len(rec.log)}"

        self.device, self.pool = Device(), Pool()

    def addresses(self, buffers, offsets, stream):
        return [0xC0FFEE00 for _ in buffers]

    def preempt_read_back(self, address, stream, tiles):
        """The launch's wait, its 8-byte read-back and (not done) the wait for idle: one call."""
        self.log.append(("read", stream, address, 8))
        taken, saved = self._taken.pop(0)
        return taken >= tiles and saved == 0


def _run(taken, tiles=40, relaunches=2, grid=5):
    rec = Recorder(taken)

    def launch(tag):
        return lambda stream, quota, *args: rec.log.append((tag, stream, args))

    plan = preempt.PreemptiblePlan(rec, launch("yield"), launch("finish"), 96, tiles, grid,
                                   grid * 128 * 256 * 4, relaunches)  # fmt: skip
    assert plan(77, None, "A", 0, "B", 0) == "buffer1"
    ctl_words = C["GK_PREEMPT_CTL_WORDS"] + C["GK_PREEMPT_RECORD_WORDS"] * grid
    assert rec.log[:3] == [("allocate", 96), ("allocate", 4 * ctl_words),
                           ("allocate", grid * 128 * 256 * 4)]  # fmt: skip
    # Counter 0, no saved tile, records unwritten, no block started.
    words = enumerate([0, 0, 1, 0])
    assert rec.log[3:7] == [("write", 77, 0xC0FFEE00 + 4 * i, v) for i, v in words]
    return rec.log[7:]


ARGS = ("A", 0, "B", 0, "buffer1", 0, "buffer2", 0, "buffer3", 0)
YIELD_AND_READ = [("yield", 77, ARGS), ("read", 77, 0xC0FFEE00, 8)]


def test_the_control_words_a_call_starts_from():
    words = preempt.control_words(3)
    assert words.dtype == np.int32
    assert words.tolist() == [0, 0, 1, 0] + [0] * (3 * C["GK_PREEMPT_RECORD_WORDS"])


def test_the_blocks_stamps_are_read_from_their_records():
    # Record words (geometry.cuh): saved tile + 1, next K slice, then three int64 %globaltimer
    # stamps: seen raised, last seen lowered, the block's end.
    assert C["GK_PREEMPT_RECORD_WORDS"] == 8
    words = preempt.control_words(2)
    blocks = [(0, 5_000_000_123, 5_000_004_000), (2**40 + 7, 2**40 - 3, 2**40 + 9_000)]
    for block, (seen, clear, end) in enumerate(blocks):
        record = words[4 + 8 * block : 4 + 8 * block + 8]
        record[:2] = (block + 11, 64)
        for word, value in ((C["GK_PREEMPT_STAMP_SEEN"], seen),
                            (C["GK_PREEMPT_STAMP_CLEAR"], clear),
                            (C["GK_PREEMPT_STAMP_EXIT"], end)):  # fmt: skip
            record[word : word + 2] = np.array([value], np.int64).view(np.int32)
    st = preempt.stamps(words, 2)
    assert st["seen"].tolist() == [0, 2**40 + 7]
    assert st["clear"].tolist() == [5_000_000_123, 2**40 - 3]
    assert st["exit"].tolist() == [5_000_004_000, 2**40 + 9_000]


def test_a_product_not_preempted_is_one_launch():
    assert _run([(40, 0)]) == YIELD_AND_READ
    assert _run([(41, 0)]) == YIELD_AND_READ  # launches past the last tile take none


def test_each_preemption_relaunches_then_the_last_launch_finishes():
    assert _run([(7, 2), (40, 0)]) == YIELD_AND_READ * 2
    assert _run([(7, 1), (19, 3), (39, 0)]) == YIELD_AND_READ * 3 + [("finish", 77, ARGS)]


def test_saved_tiles_keep_relaunching_after_the_last_tile_is_taken():
    # Every tile taken, but tiles stopped mid-way wait in their blocks' save slots.
    assert _run([(40, 3), (40, 1), (40, 0)], relaunches=3) == YIELD_AND_READ * 3
    assert _run([(40, 3), (40, 1)], relaunches=1) == YIELD_AND_READ * 2 + [("finish", 77, ARGS)]


def test_a_word_beyond_the_device_is_refused():
    rec = Recorder()
    with pytest.raises(ValueError, match="preemption word 4 does not exist"):
        preempt.raise_word(rec, 1, 4)
    preempt.raise_word(rec, 1, 3)
    preempt.lower_word(rec, 1, 3)
    assert rec.log == [("write", 1, WORDS + 12, 1), ("write", 1, WORDS + 12, 0)]


def test_expected_durations_follow_the_kernel_family():
    p = gemm_plan.Problem("bfloat16", 8192, 8192, 8192, (), (8192, 1), (8192, 1), (8192, 1),
                          (), (), (), (True, True, True))  # fmt: skip
    ns = gemm_plan.expected_ns(p, gemm_plan.SM90)
    assert 1.4e6 < ns < 1.7e6  # 1.1 TFLOP at 700 TFLOP/s
    # A decode step's product is bound by the weight's bytes.
    g = gemm_plan.Problem("bfloat16", 1, 11008, 4096, (), (4096, 1), (1, 4096), (11008, 1),
                          (), (), (), (True, True, True))  # fmt: skip
    moved = (4096 + 4096 * 11008 + 11008) * 2
    assert gemm_plan.expected_ns(g, gemm_plan.GEMV) == int(moved / gemm_plan.EXPECTED_BYTES_PER_NS)


def test_the_read_back_waits_for_guaranteed_idle_only_when_not_done():
    # _core.preempt_read_back over the CPU pool (its copy to host a memcpy): the launch's
    # (tiles taken, saved tiles waiting) decide; not done, it returns only once no guaranteed
    # task runs on the calling thread's scheduler, all in one call without the GIL.
    import ctypes
    import time

    from gpukit import _native

    pool = _core.Pool(_native.host_allocator_table())
    buf = pool.allocate(64)
    address = buf.device_ptr(0)
    words = (ctypes.c_uint32 * 2).from_address(address)
    for state, done in (((40, 0), True), ((41, 0), True), ((40, 1), False), ((39, 0), False)):
        words[0], words[1] = state
        assert _core.preempt_read_back(pool, address, 0, 40) is done  # no task: no wait
    sched = _core.Scheduler(pool, 1 << 20)
    flood = sched.submit("flood", "best_effort", 0, 0, inline=True)
    critical = sched.submit("critical", "guaranteed", 0, 0, inline=True)
    sched.enter_task(flood)
    try:
        assert sched.guaranteed_active
        words[0], words[1] = 40, 0
        assert _core.preempt_read_back(pool, address, 0, 40)  # done: returns at once
        words[1] = 2
        ended = []
        other = threading.Thread(target=lambda: (time.sleep(0.05), ended.append(time.monotonic()),
                                                 sched.finish(critical)))  # fmt: skip
        other.start()
        assert not _core.preempt_read_back(pool, address, 0, 40)
        assert ended and time.monotonic() >= ended[0] and not sched.guaranteed_active
        other.join()
    finally:
        sched.exit_task()
        sched.finish(flood)
