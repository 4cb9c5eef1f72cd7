"""Every operation torch offers on CPU tensors, through the backend "rcc", checked exactly against
values computed locally and against gloo on the same inputs (a gloo group over the same ranks).
Run by torchrun (or any launcher, with RCC_TEST_INIT=rcc:// and rcc's rendezvous; RCC_TEST_INIT=store:PATH
passes init_process_group a FileStore of its own), 1..4 ranks:

    torchrun --no_python --nproc_per_node=4 /usr/bin/python3 tests/torch/ops_test.py

Inputs are small integers of every dtype, so sums, products and averages are exact in every type;
sizes 0, 1, 1000 and 1 << 20 elements; non-contiguous tensors; async work and futures; groups made
by new_group; point-to-point with and without a source. Prints "ops_test: N checks passed" on
rank 0 and exits 1 on the first mismatch (naming the operation, dtype, op and size).
"""
import os
import sys
import time

import torch
import torch.distributed as dist

import rcc_torch  # noqa: F401  (registers "rcc")

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.uint8, torch.int16,
          torch.int32, torch.int64, torch.bool]
INTEGER = {torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64}
FLOATING = {torch.float32, torch.float64, torch.float16, torch.bfloat16}
checks = 0


def fail(what):
    print(f"ops_test rank {dist.get_rank()}: FAIL {what}", flush=True)
    sys.exit(1)


def expect_equal(got, want, what):
    global checks
    checks += 1
    if got.dtype != want.dtype or got.shape != want.shape or not torch.equal(got, want):
        diff = "" if got.shape != want.shape else f", first differences at {(got != want).nonzero()[:4].tolist()}"
        fail(f"{what}: got {got.dtype}{list(got.shape)} {got.flatten()[:8].tolist()}, want "
             f"{want.dtype}{list(want.shape)} {want.flatten()[:8].tolist()}{diff}")


def data(rank, n, dtype, seed=0, op=None):
    """Rank `rank`'s input: small integers (products stay in int8 at 4 ranks)."""
    x = (torch.arange(n, dtype=torch.int64) * 7 + rank * 13 + seed * 5)
    if dtype == torch.bool:
        return (x % 3 == 0)
    if op is not None and op == dist.ReduceOp.PRODUCT:
        return (x % 2 + 1).to(dtype)
    if dtype == torch.uint8:
        return (x % 3).to(dtype)
    return (x % 5 - 2).to(dtype)


def reference(op, tensors):
    """What reducing the ranks' tensors with op gives, in their dtype (bool as gloo: SUM/MAX = or)."""
    stacked = torch.stack(tensors)
    dtype = tensors[0].dtype
    if dtype == torch.bool:
        as_int = stacked.to(torch.int64)
        if op in (dist.ReduceOp.SUM, dist.ReduceOp.MAX, dist.ReduceOp.BOR):
            return as_int.amax(0).bool()
        if op in (dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.BAND):
            return as_int.amin(0).bool()
        return (as_int.sum(0) % 2).bool()  # BXOR
    wide = stacked.to(torch.float64 if dtype in FLOATING else torch.int64)
    if op == dist.ReduceOp.SUM:
        result = wide.sum(0)
    elif op == dist.ReduceOp.AVG:
        result = wide.sum(0) / len(tensors)
    elif op == dist.ReduceOp.PRODUCT:
        result = wide.prod(0)
    elif op == dist.ReduceOp.MIN:
        result = wide.amin(0)
    elif op == dist.ReduceOp.MAX:
        result = wide.amax(0)
    else:
        result = wide[0].clone()
        for t in wide[1:]:
            result = {dist.ReduceOp.BAND: torch.bitwise_and, dist.ReduceOp.BOR: torch.bitwise_or,
                      dist.ReduceOp.BXOR: torch.bitwise_xor}[op](result, t)
    return result.to(dtype)


def ops_for(dtype):
    ops = [dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX]
    if dtype in INTEGER or dtype == torch.bool:
        ops += [dist.ReduceOp.BAND, dist.ReduceOp.BOR, dist.ReduceOp.BXOR]
    if dtype in FLOATING:
        ops += [dist.ReduceOp.AVG]
    return ops


GLOO_DTYPES = set()  # what gloo's all_reduce accepts here (probed in main)


def gloo_takes(dtype, op):
    """What gloo's reductions accept: no AVG; its dtypes."""
    return op != dist.ReduceOp.AVG and dtype in GLOO_DTYPES


def probe_gloo(gloo):
    for dtype in DTYPES:
        try:
            dist.all_reduce(torch.zeros(2, dtype=dtype), group=gloo)
            GLOO_DTYPES.add(dtype)
        except RuntimeError:
            pass


def check_reductions(rank, size, gloo, sizes, dtypes=None):
    for dtype in dtypes or DTYPES:
        for op in ops_for(dtype):
            for n in sizes:
                inputs = [data(r, n, dtype, 1, op) for r in range(size)]
                want = reference(op, inputs)
                what = f"all_reduce {dtype} {op} n={n}"
                t = inputs[rank].clone()
                dist.all_reduce(t, op=op)
                expect_equal(t, want, what)
                if gloo is not None and gloo_takes(dtype, op) and n > 0:
                    g = inputs[rank].clone()
                    dist.all_reduce(g, op=op, group=gloo)
                    expect_equal(t, g, what + " (against gloo)")
                for root in {0, size - 1}:
                    t = inputs[rank].clone()
                    dist.reduce(t, dst=root, op=op)
                    if rank == root:
                        expect_equal(t, want, f"reduce to {root} {dtype} {op} n={n}")
                    if gloo is not None and gloo_takes(dtype, op) and n > 0:
                        g = inputs[rank].clone()
                        dist.reduce(g, dst=root, op=op, group=gloo)
                        if rank == root:
                            expect_equal(t, g, f"reduce to {root} {dtype} {op} n={n} (against gloo)")
                # reduce_scatter: rank r gets block r of the reduction of every rank's size blocks.
                blocks = [[data(r, n, dtype, 2 + b, op) for b in range(size)] for r in range(size)]
                out = torch.empty(n, dtype=dtype)
                dist.reduce_scatter(out, [b.clone() for b in blocks[rank]], op=op)
                expect_equal(out, reference(op, [blocks[r][rank] for r in range(size)]),
                             f"reduce_scatter {dtype} {op} n={n}")
                flat_in = torch.cat(blocks[rank])
                out2 = torch.empty(n, dtype=dtype)
                dist._reduce_scatter_base(out2, flat_in, op=op)
                expect_equal(out2, out, f"_reduce_scatter_base {dtype} {op} n={n}")


def check_movement(rank, size, gloo, sizes, dtypes=None):
    for dtype in dtypes or DTYPES:
        for n in sizes:
            inputs = [data(r, n, dtype, 3) for r in range(size)]
            for root in {0, size - 1}:
                t = inputs[rank].clone() if rank == root else torch.zeros(n, dtype=dtype)
                dist.broadcast(t, src=root)
                expect_equal(t, inputs[root], f"broadcast from {root} {dtype} n={n}")
                if gloo is not None and dtype in GLOO_DTYPES and n > 0:
                    g = inputs[rank].clone() if rank == root else torch.zeros(n, dtype=dtype)
                    dist.broadcast(g, src=root, group=gloo)
                    expect_equal(t, g, f"broadcast from {root} {dtype} n={n} (against gloo)")
            outs = [torch.empty(n, dtype=dtype) for _ in range(size)]
            dist.all_gather(outs, inputs[rank])
            for r in range(size):
                expect_equal(outs[r], inputs[r], f"all_gather {dtype} n={n} block {r}")
            if gloo is not None and dtype in GLOO_DTYPES and n > 0:  # gloo divides by zero at n=0
                gouts = [torch.empty(n, dtype=dtype) for _ in range(size)]
                dist.all_gather(gouts, inputs[rank], group=gloo)
                for r in range(size):
                    expect_equal(outs[r], gouts[r], f"all_gather {dtype} n={n} (against gloo)")
            flat = torch.empty(n * size, dtype=dtype)
            dist._all_gather_base(flat, inputs[rank])
            expect_equal(flat, torch.cat(inputs), f"_all_gather_base {dtype} n={n}")
            root = size - 1
            gathered = [torch.empty(n, dtype=dtype) for _ in range(size)] if rank == root else None
            dist.gather(inputs[rank], gathered, dst=root)
            if rank == root:
                for r in range(size):
                    expect_equal(gathered[r], inputs[r], f"gather {dtype} n={n} block {r}")
            pieces = [data(root, n, dtype, 4 + r) for r in range(size)]
            out = torch.empty(n, dtype=dtype)
            dist.scatter(out, pieces if rank == root else None, src=root)
            expect_equal(out, pieces[rank], f"scatter {dtype} n={n}")
            if gloo is not None and dtype in GLOO_DTYPES and n > 0:
                ggathered = [torch.empty(n, dtype=dtype) for _ in range(size)] if rank == root else None
                dist.gather(inputs[rank], ggathered, dst=root, group=gloo)
                if rank == root:
                    for r in range(size):
                        expect_equal(gathered[r], ggathered[r], f"gather {dtype} n={n} block {r} (against gloo)")
                gout = torch.empty(n, dtype=dtype)
                dist.scatter(gout, pieces if rank == root else None, src=root, group=gloo)
                expect_equal(out, gout, f"scatter {dtype} n={n} (against gloo)")
            # all_to_all: rank r's block for rank d is data(r, n, seed 6 + d).
            send = [data(rank, n, dtype, 6 + d) for d in range(size)]
            recv = [torch.empty(n, dtype=dtype) for _ in range(size)]
            dist.all_to_all(recv, send)
            for s in range(size):
                expect_equal(recv[s], data(s, n, dtype, 6 + rank), f"all_to_all {dtype} n={n} from {s}")
            single_in = torch.cat(send)
            single_out = torch.empty(n * size, dtype=dtype)
            dist.all_to_all_single(single_out, single_in)
            expect_equal(single_out, torch.cat(recv), f"all_to_all_single {dtype} n={n}")
            if gloo is not None and dtype in GLOO_DTYPES and n > 0:
                gloo_out = torch.empty(n * size, dtype=dtype)
                dist.all_to_all_single(gloo_out, single_in, group=gloo)
                expect_equal(single_out, gloo_out, f"all_to_all_single {dtype} n={n} (against gloo)")


def check_uneven_all_to_all(rank, size):
    # Rank r sends (r + d) % 3 rows of width 3 to rank d, zeros included.
    rows = lambda s, d: (s + d) % 3  # noqa: E731
    send = torch.cat([torch.full((rows(rank, d), 3), rank * 10 + d, dtype=torch.int32) for d in range(size)])
    out_splits = [rows(s, rank) for s in range(size)]
    out = torch.empty(sum(out_splits), 3, dtype=torch.int32)
    dist.all_to_all_single(out, send, out_splits, [rows(rank, d) for d in range(size)])
    want = torch.cat([torch.full((rows(s, rank), 3), s * 10 + rank, dtype=torch.int32) for s in range(size)])
    expect_equal(out, want, "all_to_all_single with split sizes")


def check_non_contiguous(rank, size):
    base = torch.arange(64, dtype=torch.float32).reshape(8, 8) + rank
    t = base[:, ::2]
    assert not t.is_contiguous()
    dist.all_reduce(t)
    want = (torch.arange(64, dtype=torch.float32).reshape(8, 8) * size + sum(range(size)))[:, ::2]
    expect_equal(t, want, "all_reduce of a non-contiguous tensor")
    expect_equal(base[:, 1::2], (torch.arange(64, dtype=torch.float32).reshape(8, 8) + rank)[:, 1::2],
                 "all_reduce of a non-contiguous tensor leaves the gaps alone")
    outs = [torch.empty(8, 8, dtype=torch.int64)[:, 1::2] for _ in range(size)]
    dist.all_gather(outs, torch.full((8, 4), rank, dtype=torch.int64).t().contiguous().t())
    for r in range(size):
        expect_equal(outs[r], torch.full((8, 4), r, dtype=torch.int64), "all_gather into non-contiguous outputs")
    b = (torch.arange(12, dtype=torch.int16).reshape(3, 4) * (rank + 1)).t()
    dist.broadcast(b, src=0)
    expect_equal(b, torch.arange(12, dtype=torch.int16).reshape(3, 4).t(), "broadcast of a transposed tensor")
    # Every rank's row block r of a strided input: reduce_scatter and all_to_all_single, a column
    # of a matrix as gather's input and scatter's output, and a coalesced list of strided tensors.
    grid = (torch.arange(size * 12, dtype=torch.int32).reshape(size * 4, 3) + rank).t()  # 3 x 4*size
    assert not grid.is_contiguous()
    blocks = [grid[:, 4 * r:4 * r + 4] for r in range(size)]
    out = torch.empty(3, 4, dtype=torch.int32)
    dist.reduce_scatter(out, blocks)
    want_grid = (torch.arange(size * 12, dtype=torch.int32).reshape(size * 4, 3) * size + sum(range(size))).t()
    expect_equal(out, want_grid[:, 4 * rank:4 * rank + 4].contiguous(), "reduce_scatter of strided blocks")
    sent = lambda s: (torch.arange(size * 24, dtype=torch.int32).reshape(size * 4, 6) + s)[:, ::2]  # noqa: E731
    assert not sent(rank).is_contiguous()
    single = torch.empty(4 * size, 3, dtype=torch.int32)
    dist.all_to_all_single(single, sent(rank))
    for s in range(size):
        expect_equal(single[4 * s:4 * s + 4], sent(s)[4 * rank:4 * rank + 4].contiguous(),
                     f"all_to_all_single of a strided input from {s}")
    column = torch.full((5, 2), rank, dtype=torch.float64)[:, 1]
    root = size - 1
    gathered = [torch.empty(5, dtype=torch.float64) for _ in range(size)] if rank == root else None
    dist.gather(column, gathered, dst=root)
    if rank == root:
        for r in range(size):
            expect_equal(gathered[r], torch.full((5,), float(r), dtype=torch.float64), f"gather of a column from {r}")
    target = torch.zeros(5, 2, dtype=torch.float64)
    pieces = [torch.full((5,), float(10 + r), dtype=torch.float64) for r in range(size)]
    dist.scatter(target[:, 0], pieces if rank == root else None, src=root)
    expect_equal(target[:, 0], torch.full((5,), float(10 + rank), dtype=torch.float64), "scatter into a column")
    expect_equal(target[:, 1], torch.zeros(5, dtype=torch.float64), "scatter into a column leaves the other alone")
    strided = [torch.full((6, 2), float(rank), dtype=torch.float32)[:, 0] for _ in range(3)]
    dist.all_reduce_coalesced(strided)
    for t in strided:
        expect_equal(t, torch.full((6,), float(sum(range(size))), dtype=torch.float32),
                     "all_reduce_coalesced of strided tensors")


def check_async_and_futures(rank, size):
    tensors = [torch.full((1000,), float(rank + i), dtype=torch.float64) for i in range(8)]
    works = [dist.all_reduce(t, async_op=True) for t in tensors]
    futures = [w.get_future().then(lambda f: f.value()[0] * 2) for w in works]
    for i, (w, f) in enumerate(zip(works, futures)):
        w.wait()
        if not w.is_completed():
            fail("work not completed after wait()")
        want = torch.full((1000,), float(sum(range(size)) + i * size), dtype=torch.float64)
        expect_equal(tensors[i], want, f"async all_reduce {i}")
        expect_equal(f.wait(), want * 2, f"future of async all_reduce {i}")
    work = dist.barrier(async_op=True)
    work.wait()
    mine = [torch.full((2, 3), rank, dtype=torch.int64), torch.arange(1000, dtype=torch.int64) + rank]
    gathered = [[torch.empty_like(t) for t in mine] for _ in range(size)]
    dist.all_gather_coalesced(gathered, mine)
    for r in range(size):
        expect_equal(gathered[r][0], torch.full((2, 3), r, dtype=torch.int64), f"all_gather_coalesced from {r}, 1st")
        expect_equal(gathered[r][1], torch.arange(1000, dtype=torch.int64) + r, f"all_gather_coalesced from {r}, 2nd")
    coalesced = [torch.full((n,), float(rank), dtype=torch.float32) for n in (3, 0, 1000, 7)]
    dist.all_reduce_coalesced(coalesced)
    for t in coalesced:
        expect_equal(t, torch.full(t.shape, float(sum(range(size))), dtype=torch.float32), "all_reduce_coalesced")


def check_shared_memory_inputs(rank, size):
    """Inputs that share memory with their outputs, as torch allows: an all_gather into a tensor
    from its own block, a reduce_scatter into the input's block, all_to_all_single(t, t)."""
    n = 1000
    flat = torch.zeros(n * size, dtype=torch.int64)
    flat[n * rank:n * (rank + 1)] = data(rank, n, torch.int64, 7)
    dist._all_gather_base(flat, flat[n * rank:n * (rank + 1)])
    expect_equal(flat, torch.cat([data(r, n, torch.int64, 7) for r in range(size)]),
                 "all_gather from the output's own block")
    inputs = [torch.cat([data(r, n, torch.int64, 8 + b) for b in range(size)]) for r in range(size)]
    mine = inputs[rank].clone()
    dist._reduce_scatter_base(mine[n * rank:n * (rank + 1)], mine)
    want = reference(dist.ReduceOp.SUM, [inputs[r][n * rank:n * (rank + 1)] for r in range(size)])
    expect_equal(mine[n * rank:n * (rank + 1)], want, "reduce_scatter into the input's own block")
    t = torch.cat([data(rank, n, torch.int64, 9 + d) for d in range(size)])
    dist.all_to_all_single(t, t)
    expect_equal(t, torch.cat([data(s, n, torch.int64, 9 + rank) for s in range(size)]), "all_to_all_single(t, t)")


def check_async_orderings_gloo_runs(rank, size):
    """Programs gloo runs, where an async small collective must start before its caller waits for it
    (a backend that ran it on the caller's thread deadlocked here until the timeout)."""
    if size == 1:
        return
    total = float(sum(range(size)))
    # 1. An async all_reduce, then the message a peer needs before it joins the all_reduce.
    t = torch.full((4,), float(rank))
    token = torch.full((2,), 7, dtype=torch.int32)
    if rank == 0:
        work = dist.all_reduce(t, async_op=True)
        dist.send(token, 1)
        work.wait()
    elif rank == 1:
        dist.recv(token, 0)
        dist.all_reduce(t)
    else:
        dist.all_reduce(t)
    expect_equal(t, torch.full((4,), total), "async all_reduce, then a send the peer needs first")
    expect_equal(token, torch.full((2,), 7, dtype=torch.int32), "the send after an async all_reduce")
    # 2. Async all_reduces on two groups, issued and waited in opposite orders on even and odd ranks.
    group_a, group_b = dist.new_group(list(range(size))), dist.new_group(list(range(size)))
    a, b = torch.full((3,), float(rank)), torch.full((3,), float(2 * rank))
    order = [(group_a, a), (group_b, b)] if rank % 2 == 0 else [(group_b, b), (group_a, a)]
    works = [dist.all_reduce(tensor, group=group, async_op=True) for group, tensor in order]
    for work in reversed(works):
        work.wait()
    expect_equal(a, torch.full((3,), total), "async all_reduce on group A, issued in opposite orders")
    expect_equal(b, torch.full((3,), 2 * total), "async all_reduce on group B, issued in opposite orders")
    # 3. Polled to completion without wait(), and completed through its future alone.
    c = torch.full((5,), float(rank))
    work = dist.all_reduce(c, async_op=True)
    deadline = time.monotonic() + 60
    while not work.is_completed():
        if time.monotonic() > deadline:
            fail("an async all_reduce polled with is_completed() never completed")
    expect_equal(c, torch.full((5,), total), "async all_reduce polled with is_completed()")
    d = torch.full((5,), float(rank))
    got = dist.all_reduce(d, async_op=True).get_future().wait()[0]
    expect_equal(got, torch.full((5,), total), "async all_reduce completed through its future")
    # 4. Issued, then a second of computing before the wait: the others, in a blocking all_reduce,
    # finish long before that second is over (held, it would start only at the wait).
    e = torch.full((2,), float(rank))
    if rank == 0:
        work = dist.all_reduce(e, async_op=True)
        time.sleep(1.0)
        work.wait()
    else:
        began = time.monotonic()
        dist.all_reduce(e)
        took = time.monotonic() - began
        if took > 0.5:
            fail(f"a blocking all_reduce waited {took:.2f} s for rank 0's async one, issued before it computed for 1 s")
    expect_equal(e, torch.full((2,), total), "async all_reduce, then computing before the wait")


def backend_worker_switches():
    """Voluntary context switches of this process's backend worker threads (named "rcc-torch")."""
    total = 0
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/comm") as f:
                if f.read().strip() != "rcc-torch":
                    continue
            with open(f"/proc/self/task/{task}/status") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("voluntary_ctxt_switches:"))
        except (FileNotFoundError, ProcessLookupError):
            continue  # a thread that ended meanwhile
    return total


def check_idle_worker_stays_asleep(rank, size):
    # A small blocking call runs on the caller's thread; it used to wake each group's idle worker
    # thread on the way out (a futex call and a context switch per call, which with 4 ranks on 2
    # cores made an 8-byte all_reduce 70 us instead of 30).
    t = torch.ones(2)
    dist.all_reduce(torch.ones(1 << 16), async_op=True).wait()  # the worker ran something
    dist.barrier()
    before = backend_worker_switches()
    calls = 2000
    for _ in range(calls):
        dist.all_reduce(t)
    woken = backend_worker_switches() - before
    if woken >= calls // 100:  # 0 here; woken on every call it was 155-2000, by how fast calls are
        fail(f"the backend's idle worker threads were woken {woken} times by {calls} small blocking all_reduce calls")


def check_point_to_point(rank, size):
    if size == 1:
        return
    right, left = (rank + 1) % size, (rank - 1) % size
    for n in (0, 1, 1000, 1 << 20):
        out = torch.arange(n, dtype=torch.int32) + rank
        into = torch.empty(n, dtype=torch.int32)
        reqs = [dist.isend(out, right, tag=n % 7), dist.irecv(into, left, tag=n % 7)]
        for r in reqs:
            r.wait()
        expect_equal(into, torch.arange(n, dtype=torch.int32) + left, f"isend/irecv ring n={n}")
    if rank == 0:
        seen = set()
        for _ in range(size - 1):
            t = torch.empty(5, dtype=torch.int64)
            sender = dist.recv(t)  # any source
            expect_equal(t, torch.full((5,), sender * 3, dtype=torch.int64), f"recv from any source ({sender})")
            seen.add(sender)
        if seen != set(range(1, size)):
            fail(f"recv from any source saw {sorted(seen)}")
    else:
        dist.send(torch.full((5,), rank * 3, dtype=torch.int64), 0)
    # Blocking send/recv of a non-contiguous tensor.
    if rank == 0:
        dist.send(torch.arange(20, dtype=torch.float32).reshape(4, 5).t(), 1)
    elif rank == 1:
        got = torch.zeros(5, 4, dtype=torch.float32)
        dist.recv(got, 0)
        expect_equal(got, torch.arange(20, dtype=torch.float32).reshape(4, 5).t(), "recv of a transposed tensor")


def check_groups(rank, size):
    evens = [r for r in range(size) if r % 2 == 0]
    odds_reversed = [r for r in range(size - 1, -1, -1) if r % 2 == 1]
    groups = [dist.new_group(evens)]
    if odds_reversed:
        groups.append(dist.new_group(odds_reversed))
    groups.append(dist.new_group(list(range(size))))
    for members in ([evens, odds_reversed] if odds_reversed else [evens]) + [list(range(size))]:
        group = groups.pop(0)
        if rank not in members:
            continue
        t = torch.tensor([rank], dtype=torch.int64)
        dist.all_reduce(t, group=group)
        expect_equal(t, torch.tensor([sum(members)], dtype=torch.int64), f"all_reduce on group {members}")
        outs = [torch.empty(1, dtype=torch.int64) for _ in members]
        dist.all_gather(outs, torch.tensor([rank], dtype=torch.int64), group=group)
        # torch sorts a group's ranks: group rank i is the i-th smallest member.
        expect_equal(torch.cat(outs), torch.tensor(sorted(members), dtype=torch.int64), f"all_gather on {members}")
        b = torch.tensor([rank * 100], dtype=torch.int64)
        dist.broadcast(b, src=max(members), group=group)
        expect_equal(b, torch.tensor([max(members) * 100], dtype=torch.int64), f"broadcast on group {members}")


def check_unsupported(rank):
    try:
        dist.all_reduce(torch.ones(3, dtype=torch.int32), op=dist.ReduceOp.AVG)
    except RuntimeError as e:
        if "AVG" not in str(e):
            fail(f"AVG of an int tensor: the error does not say why: {e}")
    else:
        fail("AVG of an int tensor did not raise")
    try:
        dist.all_reduce(torch.ones(3), op=dist._make_nccl_premul_sum(2.0))
    except RuntimeError as e:
        if "PREMUL_SUM" not in str(e) or "then use SUM" not in str(e):
            fail(f"PREMUL_SUM: the error does not say what and why: {e}")
    else:
        fail("PREMUL_SUM did not raise")
    # Complex tensors travel as their real pairs (torch views them so before the backend).
    c = torch.full((3,), complex(rank, 1), dtype=torch.complex64)
    dist.all_reduce(c)
    expect_equal(c, torch.full((3,), complex(sum(range(dist.get_world_size())), dist.get_world_size()),
                               dtype=torch.complex64), "all_reduce of a complex tensor")


def main():
    init = os.environ.get("RCC_TEST_INIT", "env://")
    if init.startswith("store:"):  # an explicit store, as a program that makes its own passes it
        size = int(os.environ["WORLD_SIZE"])
        dist.init_process_group("rcc", store=dist.FileStore(init[len("store:"):], size),
                                rank=int(os.environ["RANK"]), world_size=size)
    else:
        dist.init_process_group("rcc", init_method=init)
    rank, size = dist.get_rank(), dist.get_world_size()
    gloo = dist.new_group(backend="gloo") if os.environ.get("RCC_TEST_NO_GLOO") is None else None
    quick = os.environ.get("RCC_TEST_QUICK") is not None
    if gloo is not None:
        probe_gloo(gloo)
    check_reductions(rank, size, gloo, (0, 1, 1000))
    check_movement(rank, size, gloo, (0, 1, 1000))
    # 1 << 20 elements, where the algorithms differ from the small sizes': every collective and op.
    large = [torch.float32] if quick else [torch.float32, torch.int64]
    check_reductions(rank, size, gloo, (1 << 20,), large)
    check_movement(rank, size, gloo, (1 << 20,), large)
    for dtype in ([torch.float32] if quick else [torch.float32, torch.int64, torch.bfloat16]):
        inputs = [data(r, 1 << 20, dtype, 9) for r in range(size)]
        t = inputs[rank].clone()
        dist.all_reduce(t)
        expect_equal(t, reference(dist.ReduceOp.SUM, inputs), f"all_reduce {dtype} n=1<<20")
        outs = [torch.empty(1 << 20, dtype=dtype) for _ in range(size)]
        dist.all_gather(outs, inputs[rank])
        expect_equal(torch.cat(outs), torch.cat(inputs), f"all_gather {dtype} n=1<<20")
    check_uneven_all_to_all(rank, size)
    check_non_contiguous(rank, size)
    check_async_and_futures(rank, size)
    check_async_orderings_gloo_runs(rank, size)
    check_shared_memory_inputs(rank, size)
    check_idle_worker_stays_asleep(rank, size)
    check_point_to_point(rank, size)
    check_groups(rank, size)
    check_unsupported(rank)
    # A group that outlives the default one (as a DDP model's may): the job's last communicator is
    # then its, and it still meets the others through the default group's store.
    survivor = dist.new_group(list(range(size)))
    dist.barrier()
    if rank == 0:
        print(f"ops_test: {checks} checks passed on {size} rank(s) ({init}); against gloo for "
              f"{', '.join(sorted(str(d).replace('torch.', '') for d in GLOO_DTYPES)) or 'nothing'}", flush=True)
    dist.destroy_process_group()
    t = torch.ones(4)
    survivor.allreduce([t]).wait()  # torch forgot its groups: the process group object itself
    expect_equal(t, torch.full((4,), float(size)), "all_reduce on a group after destroy_process_group")
    del survivor


if __name__ == "__main__":
    main()
