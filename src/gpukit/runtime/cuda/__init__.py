"""The CUDA backend: the driver through gpukit._native, kernels from kernels/ compiled by NVRTC,
memory from the Rust pool over the driver's allocator table, every op a gpukit._core.Plan
launched through the device's launch table (planners in the modules beside this one)."""

from __future__ import annotations

import threading

import numpy as np

from ... import _core, _native
from ...errors import BackendUnavailableError, CudaError
from .. import capture, jit, kernels, libs
from ..backend import Capabilities
from . import (
    attention,
    decode,
    elementwise,
    fft,
    gather,
    graphs,
    linalg,
    matmul,
    nn,
    preempt,
    reduce,
    sort,
)

CAPABILITIES = Capabilities(
    device_streams=True,
    compiles_kernels=True,
    memory_info=True,
    launch_pacing=True,
    cuda_array_interface=True,
    preemption=True,
)


class _ThreadState(threading.local):
    """A thread's current stream (each thread starts on the device's default stream)."""

    def __init__(self, default_stream: int):
        self.stream = default_stream


def device_count() -> int:
    """GPUs the CUDA driver sees (BackendUnavailableError without a driver)."""
    found, detail = _native.probe_library(libs.CUDA_DRIVER)
    if not found:
        raise BackendUnavailableError(f"CUDA driver not found: {libs.CUDA_DRIVER} ({detail})")
    try:
        return _native.CudaDevice.count(libs.CUDA_DRIVER)
    except CudaError as e:
        raise BackendUnavailableError(f"the CUDA driver at {detail} failed: {e}") from None


class CudaBackend:
    kind = "cuda"
    capabilities = CAPABILITIES

    def __init__(self, index: int = 0):
        count = device_count()
        if count == 0:
            raise BackendUnavailableError("the CUDA driver sees no GPU")
        if not 0 <= index < count:
            raise BackendUnavailableError(
                f"there is no cuda:{index}: the CUDA driver sees {count} GPU"
                f"{'s' if count > 1 else ''} (cuda:0 to cuda:{count - 1})"
            )
        try:
            self.device = _native.CudaDevice.open(libs.CUDA_DRIVER, index)
        except CudaError as e:
            raise BackendUnavailableError(f"cuda:{index} failed to open: {e}") from None
        libs.mark_loaded(libs.CUDA_DRIVER)
        self.index = index
        self.name = f"cuda:{index}"
        self.dlpack_device = (2, index)  # kDLCUDA
        compiler, self.compiler_origin = jit.open_compiler("nvrtc")
        self.jit = jit.Jit(
            compiler, jit.nvrtc_arch_options(compiler, self.device.compute_capability)
        )
        # The sm_90a GEMM (wgmma, setmaxnreg) is built for sm_90a by a JIT of its own, and its
        # tensor-map parameters are placed where the driver says (cuFuncGetParamInfo).
        self.sm90a_jit = None
        if (
            self.device.compute_capability == (9, 0)
            and 90 in compiler.supported_archs()
            and self.device.has_param_info
        ):
            self.sm90a_jit = jit.Jit(compiler, ["--gpu-architecture=sm_90a"])
        self.pool = _core.Pool(self.device.allocator_table())
        self.launch_table = self.device.launch_table()
        self.default_stream = self.device.default_stream
        self.sm_count = max(self.device.sm_count, 1)
        self.total_memory = self.device.total_memory
        self.thread = _ThreadState(self.default_stream)
        self._modules: dict = {}
        self._functions: dict = {}
        self._shared_set: dict = {}
        self._params: dict = {}
        self._lock = threading.Lock()

    @property
    def sm90a(self) -> bool:
        """Whether products may take the sm_90a GEMM here."""
        return self.sm90a_jit is not None

    def describe(self) -> str:
        d = self.device
        major, minor = d.compute_capability
        return (
            f"{d.name} ({self.name}, sm_{major}{minor}, {d.sm_count} SMs, "
            f"{d.total_memory / 2**30:.1f} GiB, L2 {d.l2_bytes // 2**20} MiB, driver "
            f"{d.driver_version // 1000}.{d.driver_version % 1000 // 10})"
        )

    def compiler_description(self) -> str:
        c = self.jit.compiler
        extra = " (sm_90a for the GEMM)" if self.sm90a else ""
        return (
            f"{c.kind} {'.'.join(map(str, c.version))} at {c.path} ({self.compiler_origin}), "
            f"target {' '.join(self.jit.arch_options)}{extra}"
        )

    # --- streams and events -------------------------------------------------------------------
    @property
    def stream(self) -> int:
        """The calling thread's current stream (`thread.stream` on hot paths)."""
        return self.thread.stream

    def set_stream(self, stream: int | None) -> None:
        stream = self.default_stream if stream is None else stream
        if stream != self.thread.stream:
            capture.refuse("switching streams")
        self.thread.stream = stream

    def synchronize(self, stream: int | None = None) -> None:
        capture.refuse("synchronize")
        self.device.synchronize(self.stream if stream is None else stream)

    def create_stream(self, priority: int) -> int:
        return self.device.create_stream(priority)

    def stream_priority_range(self) -> tuple[int, int]:
        return tuple(self.device.stream_priority_range())

    def create_event(self, timing: bool = True) -> int:
        return self.device.create_event(timing)

    def destroy_event(self, event: int) -> None:
        self.device.destroy_event(event)

    def record_event(self, event: int, stream: int) -> None:
        capture.refuse("recording an event")
        self.device.record_event(event, stream)

    def wait_event(self, stream: int, event: int) -> None:
        self.device.wait_event(stream, event)

    def event_done(self, event: int) -> bool:
        capture.refuse("querying an event")
        return self.device.event_done(event)

    def synchronize_event(self, event: int) -> None:
        capture.refuse("waiting for an event")
        self.device.synchronize_event(event)

    def elapsed_ms(self, start: int, end: int) -> float:
        capture.refuse("reading an event's time")
        return self.device.elapsed_ms(start, end)

    def memory_info(self) -> tuple[int, int]:
        return self.device.memory_info()

    def install_pacer(self, table) -> None:
        _native.install_pacer(table)

    # --- QoS: preemption words and green contexts (runtime/cuda/preempt.py) --------------------
    def preemption_available(self) -> tuple[bool, str]:
        """(whether best-effort products can yield here, why not)."""
        if not self.device.has_stream_memops:
            return False, "the driver has no stream memory operations (cuStreamWriteValue32_v2)"
        if not self.sm90a:
            return False, "no preemptible kernel for this GPU (the sm_90a GEMM only)"
        return True, ""

    def raise_preemption(self, stream: int, slot: int) -> None:
        preempt.raise_word(self, stream, slot)

    def lower_preemption(self, stream: int, slot: int) -> None:
        preempt.lower_word(self, stream, slot)

    def preempt_read_back(self, address: int, stream: int, tiles: int) -> bool:
        """After a preemptible launch on `stream`: waits for it and reads its first two control
        words at `address`; True when the product is done (`tiles` taken, none saved), else
        waits until no guaranteed task runs and returns False. One call without the GIL."""
        return _core.preempt_read_back(self.pool, address, stream, tiles)

    def green_contexts(self) -> tuple[bool, str]:
        """(whether the driver has green contexts, why not)."""
        return tuple(self.device.green_contexts())

    def green_stream(self, sm_count: int, priority: int) -> tuple[int, int]:
        """(stream, SMs it got) of a new green context of about `sm_count` SMs."""
        return tuple(self.device.green_stream(sm_count, priority))

    def matmul_expected_ns(self, a, b, out) -> int:
        """What a product is expected to take here (for the scheduler's cap on best-effort
        work in flight)."""
        return matmul.expected_ns(self, a, b, out)

    # --- kernels --------------------------------------------------------------------------------
    def module(self, name: str, source: str, options=(), compiler=None) -> int:
        """The module of `source` built by `compiler` (a jit.Jit; the device's own by default)."""
        compiler = compiler or self.jit
        key = (name, source, tuple(options), tuple(compiler.arch_options))
        module = self._modules.get(key)
        if module is None:
            image = compiler.build(name, source, options)
            with self._lock:
                module = self._modules.get(key)
                if module is None:
                    module = self._modules[key] = self.device.load_module(image)
        return module

    def function(self, file: str, defines: tuple, name: str) -> int:
        """The kernel `name` of a built-in instance (see gpukit.runtime.kernels)."""
        key = (file, defines, name)
        fn = self._functions.get(key)
        if fn is None:
            compiler = self.jit
            if file in kernels.SM90A_FILES:
                if self.sm90a_jit is None:
                    raise RuntimeError(f"{file} runs on sm_90 only, with sm_90a support")
                compiler = self.sm90a_jit
            source = kernels.source(file, defines, jit.builtin_sources())
            module = self.module(file, source, kernels.options(defines), compiler)
            fn = self._functions[key] = self.device.function(module, name)
        return fn

    def param_layout(self, fn: int, count: int) -> list[tuple[int, int]]:
        """[(byte offset, size)] of a kernel's first `count` parameters in its parameter buffer
        (all of them where the driver can count them), as the driver reports them."""
        layout = self._params.get(fn)
        if layout is None:
            layout = self._params[fn] = [tuple(p) for p in self.device.param_layout(fn, count)]
        return layout

    def kernel_instances(self) -> list:
        """A few instances of every built-in kernel file that this GPU runs (jit.warmup)."""
        major, minor = self.device.compute_capability
        instances = kernels.representative_instances("cuda", major * 10 + minor)
        return instances + (kernels.sm90a_instances() if self.sm90a else [])

    def compile_function(self, file_name: str, source: str, options, kernel: str) -> int:
        return self.device.function(self.module(file_name, source, options), kernel)

    def allow_shared(self, fn: int, nbytes: int) -> None:
        """Lets `fn` launch with `nbytes` of dynamic shared memory. Every launch with dynamic
        shared memory asks: a launch gets 48 KB unasked for its static and dynamic shared memory
        together, and the static part is known only to the compiler."""
        if self._shared_set.get(fn, 0) < nbytes:
            self.device.set_dynamic_shared(fn, nbytes)
            self._shared_set[fn] = nbytes

    @property
    def cooperative_launch(self) -> bool:
        """Whether plans made now may launch cooperatively on this device (PlanBuilder.launch's
        `cooperative`): the device's attribute and a CUDA 12.0+ driver, and the calling thread
        not capturing a graph (a cooperative cuLaunchKernelEx with a parameter buffer fails
        under stream capture, CUDA_ERROR_INVALID_VALUE on the H100's 580 driver; plans made
        while capturing are cached apart, linalg_steps.run)."""
        return bool(self.device.cooperative_launch) and capture.current() is None

    def cooperative_blocks(self, fn: int, threads: int, shared: int = 0) -> int:
        """How many blocks of `fn` (`threads` threads, `shared` dynamic shared bytes) a
        cooperative launch may have, all resident at once on the device's SMs; 0 where this
        device cannot launch cooperatively."""
        if not self.cooperative_launch:
            return 0
        self.allow_shared(fn, shared)
        return self.device.max_active_blocks(fn, threads, shared) * self.sm_count

    def blocks_for(self, threads: int, block: int) -> int:
        """Blocks for a grid-stride kernel: one per `block` threads, at most 32 per SM."""
        return min(-(-max(threads, 1) // block), self.sm_count * 32)

    def launch(self, fn, grid, block, shared: int, stream: int, params: bytes) -> None:
        """A user kernel's launch (gpukit.RawKernel): `params` packed with C alignment."""
        if shared:
            self.allow_shared(fn, shared)
        self.device.launch(fn, grid, block, shared, stream, params)

    def addresses(self, buffers, offsets, stream) -> list[int]:
        """Device addresses for work on `stream` (spilled buffers come back first; the pool
        keeps them pinned until this thread's next request)."""
        ptrs = self.pool.device_ptrs(tuple(buffers), stream)
        return [p + o for p, o in zip(ptrs, offsets, strict=True)]

    # --- data movement ----------------------------------------------------------------------
    def upload(self, host: np.ndarray, buffer, offset: int) -> None:
        capture.refuse("copying host data to the device (asarray, from_numpy)")
        stream = self.stream
        (dst,) = self.addresses((buffer,), (offset,), stream)
        self.device.copy_to_device(dst, host.reshape(-1).view(np.uint8), stream)

    def download(self, host: np.ndarray, buffer, offset: int) -> None:
        capture.refuse("reading data back (to_numpy, item, a count or error flag)")
        if host.nbytes:
            stream = self.stream
            (src,) = self.addresses((buffer,), (offset,), stream)
            self.device.copy_to_host(host.reshape(-1).view(np.uint8), src, stream)

    def copy_from_file(self, file, copies, report) -> None:
        """Copies (file offset, bytes, address) ranges of a SafeTensorsFile to the device,
        through pinned staging buffers on several threads."""
        capture.refuse("loading a file")
        file.copy_to_device(self.device, copies, 0, report)

    # --- graphs (gpukit.graphs) ----------------------------------------------------------------
    begin_capture = graphs.begin_capture
    end_capture = graphs.end_capture
    replay_graph = graphs.replay
    release_graph = graphs.release
    graph_held_bytes = graphs.held_bytes

    # --- plans (gpukit.runtime.backend) ---------------------------------------------------------
    plan_elementwise = elementwise.plan_elementwise
    plan_reduce = reduce.plan_reduce
    plan_cumsum = reduce.plan_cumsum
    plan_arange = reduce.plan_arange
    plan_philox = reduce.plan_philox
    plan_matmul = matmul.plan_matmul
    plan_preemptible_matmul = preempt.plan_preemptible_matmul
    matmul_path = matmul.matmul_path
    describe_matmul = matmul.describe_paths
    plan_gather = gather.plan_gather
    nonzero = gather.nonzero
    plan_nn_rows = nn.plan_nn_rows
    plan_embedding = nn.plan_embedding
    plan_rope = nn.plan_rope
    plan_attention = attention.plan_attention
    plan_qkv_cache = decode.plan_qkv_cache
    plan_sample = decode.plan_sample
    plan_sort = sort.plan_sort
    plan_searchsorted = sort.plan_searchsorted
    unique = sort.unique
    plan_histogram = sort.plan_histogram
    plan_bincount = sort.plan_bincount
    plan_fft = fft.plan_fft
    plan_linalg = linalg.plan_linalg
    linalg_max_n = linalg.linalg_max_n
