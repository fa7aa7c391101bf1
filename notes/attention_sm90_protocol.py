"""Protocol model of kernels/attention_sm90.cu's persistent form (GK_FA_PERSIST=1, GK_FA_PIPE=1,
GK_FA_PINGPONG=1), run on the CPU: one block's mbarriers (phases, arrival counts, transaction
bytes), the ping-pong named barriers and TMA copies that land after random delays, with the
producer's K/V thread, its Q thread and the two consumer warpgroups interleaved at random. Each
load writes a tag (item, key tile) into its stage and each product checks the tag it reads, so a
release too early shows up as a wrong tag and a phase off by one as a deadlock. The item walk and
the barrier calls restate the kernel's (gk_fa_items::each, the loops of the producer threads and
of the consumers); change them together. It caught each of three deliberate mistakes tried (Q
released before its last S, the producer waiting on the wrong k_empty parity, the final ping-pong
arrival left unconsumed).

usage: python3 notes/attention_sm90_protocol.py
"""

import random

KBM = 128


class MBar:
    def __init__(self, count):
        self.count, self.pending, self.tx, self.phase = count, count, 0, 0

    def _maybe(self):
        if self.pending == 0 and self.tx == 0:
            self.phase += 1
            self.pending = self.count

    def arrive(self):
        self.pending -= 1
        assert self.pending >= 0
        self._maybe()

    def expect_tx(self, n):
        self.tx += n
        self.arrive()

    def complete_tx(self, n):
        self.tx -= n
        assert self.tx >= 0
        self._maybe()

    def done(self, parity):
        return (self.phase & 1) != parity


class Named:
    def __init__(self):
        self.count, self.gen = 0, 0

    def arrive(self, n):
        self.count += n
        if self.count == 256:
            self.count = 0
            self.gen += 1
        assert self.count < 256


def items(block, grid, b, hq, sq, skv, causal, lengths, kbn):
    rows = -(-sq // KBM)
    per_head = (rows + 1) // 2 if causal else rows
    units = per_head * b * hq
    u, second, out = block, False, []
    while u < units:
        p = u % per_head
        bh = u // per_head
        tile = p if second else rows - 1 - p
        second = (not second) and causal and 2 * p + 1 < rows
        if not second:
            u += grid
        bb = bh // hq
        n_keys = skv if lengths is None else max(0, min(skv, lengths[bb]))
        shift = n_keys - sq
        key_end = n_keys
        m0 = tile * KBM
        if causal:
            last = min(m0 + KBM, sq) - 1
            key_end = min(key_end, last + shift + 1)
        n_tiles = -(-key_end // kbn) if key_end > 0 else 0
        out.append(((bh, tile), n_tiles))
    return out


def run(seed, block, grid, shape, stages, kbn):
    rng = random.Random(seed)
    its = items(block, grid, *shape, kbn)
    k_full = [MBar(1) for _ in range(stages)]
    v_full = [MBar(1) for _ in range(stages)]
    k_empty = [MBar(8) for _ in range(stages)]
    v_empty = [MBar(8) for _ in range(stages)]
    q_full = [MBar(1) for _ in range(2)]
    q_empty = [MBar(4) for _ in range(2)]
    named = {3: Named(), 4: Named()}
    kbuf, vbuf, qbuf = [None] * stages, [None] * stages, [None, None]
    inflight = []  # (write fn, barrier, bytes)

    def tma(write, bar):
        inflight.append((write, bar))

    def wait(bar, parity):
        while not bar.done(parity):
            yield False

    def wait_turn(bar, gen):
        while bar.gen == gen:
            yield False

    def kv_producer():
        g0 = 0
        for item, n in its:
            for t in range(n):
                g = g0 + t
                s, ph = g % stages, (g // stages) & 1
                yield from wait(k_empty[s], ph ^ 1)
                k_full[s].expect_tx(1)
                tma(lambda s=s, tag=(item, t): kbuf.__setitem__(s, tag), k_full[s])
                yield True
                yield from wait(v_empty[s], ph ^ 1)
                v_full[s].expect_tx(1)
                tma(lambda s=s, tag=(item, t): vbuf.__setitem__(s, tag), v_full[s])
                yield True
            g0 += n

    def q_producer():
        for n, (item, _) in enumerate(its):
            for c in range(2):
                yield from wait(q_empty[c], (n & 1) ^ 1)
                q_full[c].expect_tx(1)
                tma(lambda c=c, item=item: qbuf.__setitem__(c, item), q_full[c])
                yield True

    def consumer(cw):
        def turn_begin():
            bar = named[3 + cw]
            gen = bar.gen
            bar.arrive(128)
            yield from wait_turn(bar, gen)

        def turn_end():
            named[4 - cw].arrive(128)

        if cw == 1:
            named[3].arrive(128)
        g0 = 0
        for n, (item, nt) in enumerate(its):
            yield from wait(q_full[cw], n & 1)
            if nt == 0:
                for _ in range(4):
                    q_empty[cw].arrive()

            def read_qk(t, item=item, g0=g0):
                s = (g0 + t) % stages
                assert qbuf[cw] == item, (qbuf[cw], item)
                assert kbuf[s] == (item, t), (kbuf[s], item, t)

            def s_done(t, nt=nt, g0=g0):
                s = (g0 + t) % stages
                for _ in range(4):
                    k_empty[s].arrive()
                if t + 1 == nt:
                    for _ in range(4):
                        q_empty[cw].arrive()

            def read_v(t, item=item, g0=g0):
                s = (g0 + t) % stages
                assert vbuf[s] == (item, t), (vbuf[s], item, t)

            def release_v(t, g0=g0):
                s = (g0 + t) % stages
                for _ in range(4):
                    v_empty[s].arrive()

            def ph(t, g0=g0):
                return ((g0 + t) // stages) & 1

            def st(t, g0=g0):
                return (g0 + t) % stages

            if nt > 0:
                yield from wait(k_full[st(0)], ph(0))
                yield from turn_begin()
                read_qk(0)
                turn_end()
                yield True
                s_done(0)
            for t in range(1, nt):
                yield from wait(k_full[st(t)], ph(t))
                yield from wait(v_full[st(t - 1)], ph(t - 1))
                yield from turn_begin()
                read_qk(t)
                read_v(t - 1)
                turn_end()
                yield True
                s_done(t)
                yield True
                release_v(t - 1)
            if nt > 0:
                yield from wait(v_full[st(nt - 1)], ph(nt - 1))
                yield from turn_begin()
                read_v(nt - 1)
                turn_end()
                yield True
                release_v(nt - 1)
            g0 += nt
        if cw == 0:
            bar = named[3]
            gen = bar.gen
            bar.arrive(128)
            yield from wait_turn(bar, gen)

    actors = {"kv": kv_producer(), "q": q_producer(), "c0": consumer(0), "c1": consumer(1)}
    live = dict(actors)
    stalled = 0
    while live or inflight:
        choices = list(live) + (["tma"] if inflight else [])
        who = rng.choice(choices)
        if who == "tma":
            write, bar = inflight.pop(rng.randrange(len(inflight)))
            write()
            bar.complete_tx(1)
            stalled = 0
            continue
        try:
            progressed = next(live[who])
        except StopIteration:
            del live[who]
            stalled = 0
            continue
        stalled = 0 if progressed else stalled + 1
        if stalled > 10000:
            raise RuntimeError(f"deadlock: {sorted(live)}")
    assert named[3].count == 0 and named[4].count == 0
    assert all(m.tx == 0 and m.pending == m.count for m in k_full + v_full + q_full)
    return len(its)


if __name__ == "__main__":
    shapes = [
        # (b, hq, sq, skv, causal, lengths)
        (2, 4, 700, 700, True, None),
        (1, 4, 257, 515, False, None),
        (1, 3, 300, 100, True, None),
        (3, 4, 400, 600, True, [590, 141, 0]),
        (1, 2, 333, 500, True, None),
        (2, 2, 200, 129, False, None),
        (1, 1, 1, 1, False, None),
        (1, 2, 130, 0 + 130, True, [0]),
    ]
    total = 0
    for seed in range(300):
        rng = random.Random(seed)
        shape = rng.choice(shapes)
        stages, kbn = rng.choice([(4, 128), (2, 128), (2, 64), (3, 128)])
        b, hq, sq = shape[:3]
        rows = -(-sq // KBM)
        units = ((rows + 1) // 2 if shape[4] else rows) * b * hq
        grid = min(units, rng.choice([1, 2, 3, 5, 132]))
        for block in range(grid):
            total += run(seed * 1000 + block, block, grid, shape, stages, kbn)
    print("ok, items served:", total)
