"""A rank killed mid-training: the last rank SIGKILLs itself at step 5 of a DDP loop on the backend
"rcc"; every survivor must raise a RuntimeError naming it within the timeout given to
init_process_group (20 s here), and destroy_process_group must return. Each survivor prints
"failure_test rank R: raised after S s: ..." and exits 0; anything else exits 1. Run by torchrun,
which then reports the killed worker (so torchrun itself exits non-zero).
"""
import os
import signal
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel

import rcc_torch  # noqa: F401

TIMEOUT = 20


def main():
    # torchrun stops the other workers (SIGTERM, then SIGKILL 30 s later) within its monitor interval
    # of seeing the killed one, which can come before a survivor has even been scheduled to raise
    # (4 ranks on 2 cores: a CI run lost ranks 0 and 1 so). Each survivor must be seen raising, so it
    # lets the SIGTERM pass; one that never raises is still killed at 30 s, and the test fails.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    dist.init_process_group("rcc", timeout=timedelta(seconds=TIMEOUT))
    rank, size = dist.get_rank(), dist.get_world_size()
    victim = size - 1
    torch.manual_seed(0)
    ddp = DistributedDataParallel(nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 8)))
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.01)
    started = None
    try:
        for step in range(1000):
            if step == 5 and rank == victim:
                os.kill(os.getpid(), signal.SIGKILL)
            if step == 5:
                started = time.monotonic()
            optimizer.zero_grad()
            ddp(torch.randn(32, 64)).sum().backward()
            optimizer.step()
            # As a training loop logs its loss: a collective every step, also when DDP has none left.
            dist.all_reduce(torch.ones(1))
    except RuntimeError as error:
        took = time.monotonic() - (started or time.monotonic())
        message = str(error)
        if f"rank {victim}" not in message:
            print(f"failure_test rank {rank}: FAIL the error does not name rank {victim}: {message}", flush=True)
            sys.exit(1)
        if took > TIMEOUT:
            print(f"failure_test rank {rank}: FAIL raised after {took:.1f} s, over the timeout", flush=True)
            sys.exit(1)
        first_line = message.splitlines()[0][:200]
        print(f"failure_test rank {rank}: raised after {took:.2f} s: {first_line}", flush=True)
        began = time.monotonic()
        dist.destroy_process_group()
        print(f"failure_test rank {rank}: destroy_process_group returned after {time.monotonic() - began:.2f} s",
              flush=True)
        sys.exit(0)
    print(f"failure_test rank {rank}: FAIL 1000 steps without an error", flush=True)
    sys.exit(1)


if __name__ == "__main__":
    main()
