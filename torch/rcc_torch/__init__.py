"""rcc as a torch.distributed backend: ``import rcc_torch`` registers the backend "rcc" and the
rendezvous "rcc://".

    import torch.distributed as dist
    import rcc_torch
    dist.init_process_group("rcc")                         # env:// (torchrun), tcp://, file://, store=
    dist.init_process_group("rcc", init_method="rcc://")   # any launcher rcc knows: rccrun, srun, mpirun

With torch's rendezvous, the world group meets through the store torch hands it (rcc opens no
rendezvous port of its own). With "rcc://", rcc finds the job itself (rcc_comm_init, as any rcc
program) and torch's store is a TCPStore on rank 0. new_group(ranks) makes a communicator of the
world's ranks that shares its connections.
"""
import socket
from datetime import timedelta

import torch  # loads libtorch before the extension that links it
import torch.distributed as dist

from . import _C

__all__ = ["create_process_group"]


def create_process_group(options, pg_options=None):
    """The creator torch calls (extended API): options carries the group's store, rank, size,
    timeout, name and the world ranks of its members (none for the default group)."""
    del pg_options  # rcc takes its settings from RCC_* variables
    return _C.create_process_group(options.store, options.group_rank, options.group_size,
                                   options.timeout.total_seconds(), list(options.global_ranks_in_group),
                                   str(options.group_id))


def _rcc_rendezvous(url, timeout=timedelta(minutes=30), **kwargs):
    """init_method="rcc://": rank and size from whatever started the process, as rcc_comm_init finds
    them; the store torch wants is a TCPStore that rank 0 serves on a free port, its address handed
    to the others through rcc. The communicator is kept for the default group's creator."""
    del url, kwargs
    rank, size = _C.init_world()
    if rank == 0:
        store = dist.TCPStore("0.0.0.0", 0, size, True, timeout, wait_for_workers=False)
        address = f"{socket.gethostname()} {store.port}"
    else:
        address = ""
    host, port = _C.broadcast_from_rank0(address).split()
    if rank != 0:
        store = dist.TCPStore(host, int(port), size, False, timeout)
    yield (store, rank, size)
    raise RuntimeError("rcc:// rendezvous cannot be used twice")


if "RCC" not in dist.Backend._plugins:
    dist.Backend.register_backend("rcc", create_process_group, extended_api=True)
    dist.register_rendezvous_handler("rcc", _rcc_rendezvous)
