"""A progress bar for long loads: tqdm when it is installed, else a plain one on stderr. Nothing
is shown until the work has taken longer than `delay` seconds."""

from __future__ import annotations

import sys
import time


class ByteProgress:
    """Call with the bytes done so far; `close()` when finished."""

    def __init__(self, total: int, label: str, enabled: bool = True, delay: float = 1.0):
        self.total = total
        self.label = label
        self.enabled = enabled and total > 0
        self.delay = delay
        self.start = time.perf_counter()
        self._bar = None  # a tqdm bar, or True for the plain one
        self._shown = 0

    def __call__(self, done: int) -> None:
        if not self.enabled:
            return
        elapsed = time.perf_counter() - self.start
        if self._bar is None:
            if elapsed < self.delay:
                return
            self._bar = self._open(done)
        if self._bar is True:
            self._plain(done, elapsed)
        else:
            self._bar.update(done - self._shown)
        self._shown = done

    def _open(self, done: int):
        try:
            from tqdm.auto import tqdm
        except ImportError:
            return True
        # Starts at 0: __call__ adds the bytes done so far right after.
        return tqdm(total=self.total, unit="B", unit_scale=True, desc=self.label, leave=False)

    def _plain(self, done: int, elapsed: float) -> None:
        rate = done / elapsed / 1e9 if elapsed > 0 else 0.0
        sys.stderr.write(
            f"\r{self.label}: {100 * done / self.total:5.1f}% "
            f"{done / 1e9:.2f}/{self.total / 1e9:.2f} GB, {rate:.1f} GB/s"
        )
        sys.stderr.flush()

    def close(self) -> None:
        if self._bar is True:
            sys.stderr.write("\n")
            sys.stderr.flush()
        elif self._bar is not None:
            self._bar.close()
        self._bar = None
