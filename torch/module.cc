// rcc_torch._C: creates the rcc process group for torch.distributed (registered by
// rcc_torch/__init__.py as the backend "rcc").
#include <pybind11/stl.h>
#include <torch/extension.h>

#include "process_group.h"

PYBIND11_MODULE(_C, module) {
  module.doc() = "rcc's process group for torch.distributed";
  module.def(
      "create_process_group",
      [](const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, double timeout_s,
         const std::vector<int64_t>& global_ranks, const std::string& group_id) {
        return rcc_torch::ProcessGroupRcc::create(store, rank, size, timeout_s, global_ranks, group_id);
      },
      pybind11::arg("store"), pybind11::arg("rank"), pybind11::arg("size"), pybind11::arg("timeout_s"),
      pybind11::arg("global_ranks"), pybind11::arg("group_id"),
      // Waits for the other ranks; torch's stores may be served by this process's other threads.
      pybind11::call_guard<pybind11::gil_scoped_release>());
  module.def("init_world", &rcc_torch::ProcessGroupRcc::init_world,
             "rcc:// rendezvous: the job as rcc finds it (rank, size), kept for the default group",
             pybind11::call_guard<pybind11::gil_scoped_release>());
  module.def("broadcast_from_rank0", &rcc_torch::ProcessGroupRcc::broadcast_from_rank0, pybind11::arg("text"),
             "rcc:// rendezvous: rank 0's text on every rank", pybind11::call_guard<pybind11::gil_scoped_release>());
}
