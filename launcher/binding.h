// Where rccrun binds the ranks it starts on this host. By default (--bind-to auto) each rank gets a
// core of its own when the host runs no more ranks than it has cores available to rccrun (the
// CPUs of its affinity mask, so a Slurm allocation or a taskset around rccrun is respected),
// spread over packages and NUMA nodes; with more ranks than cores they are left unbound, where the
// scheduler can move them. --bind-to core|numa|none overrides. The plan is a pure function of a
// topology description, so the tests give it any machine.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/cpu.h"

namespace rccrun {

enum class Binding { kAuto, kNone, kCore, kNuma };

// One core of the machine: its CPUs (hardware threads) within the allowed set, and where it sits.
struct CoreView {
  rcc::CpuSet cpus;
  int package = 0;
  int numa = 0;
};

struct TopologyView {
  std::vector<CoreView> cores;  // only cores with at least one allowed CPU
};

struct BindingPlan {
  std::vector<std::optional<rcc::CpuSet>> cpus;  // per local rank; nullopt: unbound
  std::string summary;                           // for --report-bindings and messages
};

// This machine's cores (hwloc) restricted to the CPUs this process may run on.
TopologyView load_topology();

// The binding of `ranks` local ranks.
BindingPlan plan_binding(Binding requested, int ranks, const TopologyView& topology);

// Cores in spreading order: round robin over packages, within a package over NUMA nodes.
std::vector<int> spread_order(const TopologyView& topology);

}  // namespace rccrun
