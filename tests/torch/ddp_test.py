"""DDP training on the backend "rcc" against gloo, in one job: the same small MLP, the same seeded
synthetic data, 30 steps, once wrapped in DistributedDataParallel over the default (rcc) group and
once over a gloo group of the same ranks. Every rank must end with bitwise-identical parameters
(checked with an all_gather of a digest), and the two loss curves must match within 1e-5 relative.
Then the same with a wider MLP (807K parameters) in buckets of 1 MB through torch's allreduce
communication hook: several buckets (four here: 1 MiB three times, then 66 KB; checked), each
larger than what the backend holds for its caller's wait, finished on its worker while backward
goes on, with the hook chaining on their futures.
Run by torchrun (2 and 4 ranks):

    torchrun --no_python --nproc_per_node=4 /usr/bin/python3 tests/torch/ddp_test.py

Prints "ddp_test: ..." on rank 0; exits 1 on a mismatch.
"""
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel

import rcc_torch  # noqa: F401

STEPS = 30


def model(hidden, depth):
    torch.manual_seed(1234)
    layers = [nn.Linear(32, hidden), nn.ReLU()]
    for _ in range(depth):
        layers += [nn.Linear(hidden, hidden), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(hidden, 4))


def batch(rank, step):
    g = torch.Generator().manual_seed(1000 * step + rank)
    x = torch.randn(16, 32, generator=g)
    y = torch.randint(0, 4, (16,), generator=g)
    return x, y


def train(group, wide):
    buckets = []  # bytes of each bucket of the last step

    def counting_allreduce_hook(state, bucket):
        buckets.append(bucket.buffer().numel() * bucket.buffer().element_size())
        return default_hooks.allreduce_hook(state, bucket)

    if wide:
        ddp = DistributedDataParallel(model(512, 3), process_group=group, bucket_cap_mb=1)
        ddp.register_comm_hook(group, counting_allreduce_hook)
    else:
        ddp = DistributedDataParallel(model(64, 1), process_group=group)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    losses = []
    rank = dist.get_rank()
    for step in range(STEPS):
        buckets.clear()
        x, y = batch(rank, step)
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(ddp(x), y)
        loss.backward()
        optimizer.step()
        # The mean loss over ranks, as a training script would log it.
        logged = loss.detach().clone()
        dist.all_reduce(logged, group=group)
        losses.append(logged.item() / dist.get_world_size())
    return ddp.module, losses, buckets


def main():
    dist.init_process_group("rcc", init_method=os.environ.get("RCC_TEST_INIT", "env://"))
    rank, size = dist.get_rank(), dist.get_world_size()
    gloo = dist.new_group(backend="gloo")
    for wide in (False, True):
        rcc_model, rcc_losses, buckets = train(None, wide)
        gloo_model, gloo_losses, _ = train(gloo, wide)
        what = "MLP"
        if wide:
            # Several buckets, each beyond what the backend holds for the caller (64 KiB).
            if len(buckets) < 2 or min(buckets) <= 64 << 10:
                print(f"ddp_test rank {rank}: FAIL the wide MLP's buckets are {buckets} bytes", flush=True)
                sys.exit(1)
            what = f"wide MLP, {len(buckets)} buckets of {min(buckets)}-{max(buckets)} bytes, allreduce hook"
        # Bitwise-identical parameters on every rank: every rank's bytes, gathered.
        flat = torch.cat([p.detach().reshape(-1) for p in rcc_model.parameters()])
        everyone = [torch.empty_like(flat) for _ in range(size)]
        dist.all_gather(everyone, flat)
        for r in range(size):
            if not torch.equal(everyone[r], flat):
                print(f"ddp_test rank {rank}: FAIL {what}: rank {r}'s parameters differ from this rank's", flush=True)
                sys.exit(1)
        for step, (a, b) in enumerate(zip(rcc_losses, gloo_losses)):
            if abs(a - b) > 1e-5 * max(abs(a), abs(b)):
                print(f"ddp_test rank {rank}: FAIL {what}: step {step}: loss {a} with rcc, {b} with gloo", flush=True)
                sys.exit(1)
        gloo_flat = torch.cat([p.detach().reshape(-1) for p in gloo_model.parameters()])
        difference = (flat - gloo_flat).abs().max().item()
        if rank == 0:
            print(f"ddp_test: {size} ranks, {STEPS} steps, {what}: parameters bitwise identical on every rank; "
                  f"loss {rcc_losses[0]:.6f} -> {rcc_losses[-1]:.6f}, gloo's the same within 1e-5 (largest "
                  f"parameter difference to gloo's run {difference:.2e})", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
