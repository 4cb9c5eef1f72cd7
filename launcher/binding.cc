#include "binding.h"

#include <hwloc.h>
#include <hwloc/glibc-sched.h>

#include <algorithm>
#include <map>

namespace rccrun {
namespace {

// The index of the ancestor of `obj` of `type`, or 0 when there is none.
int ancestor_index(hwloc_topology_t topology, hwloc_obj_t obj, hwloc_obj_type_t type) {
  hwloc_obj_t ancestor = hwloc_get_ancestor_obj_by_type(topology, type, obj);
  return ancestor != nullptr ? static_cast<int>(ancestor->logical_index) : 0;
}

}  // namespace

TopologyView load_topology() {
  TopologyView view;
  hwloc_topology_t topology = nullptr;
  if (hwloc_topology_init(&topology) != 0) return view;
  if (hwloc_topology_load(topology) != 0) {
    hwloc_topology_destroy(topology);
    return view;
  }
  const rcc::CpuSet allowed = rcc::CpuSet::of_this_thread();
  const int cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
  for (int i = 0; i < cores; ++i) {
    hwloc_obj_t core = hwloc_get_obj_by_type(topology, HWLOC_OBJ_CORE, static_cast<unsigned>(i));
    cpu_set_t set;
    CPU_ZERO(&set);
    if (core == nullptr || hwloc_cpuset_to_glibc_sched_affinity(topology, core->cpuset, &set, sizeof set) != 0)
      continue;
    CoreView view_of_core;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set) && allowed.has(cpu)) view_of_core.cpus.add(cpu);
    }
    if (view_of_core.cpus.empty()) continue;
    view_of_core.package = ancestor_index(topology, core, HWLOC_OBJ_PACKAGE);
    // NUMA nodes are memory children in hwloc 2: the node of the core's cpuset.
    hwloc_obj_t node = hwloc_get_next_obj_covering_cpuset_by_type(topology, core->cpuset, HWLOC_OBJ_NUMANODE, nullptr);
    view_of_core.numa = node != nullptr ? static_cast<int>(node->logical_index) : 0;
    view.cores.push_back(view_of_core);
  }
  hwloc_topology_destroy(topology);
  return view;
}

std::vector<int> spread_order(const TopologyView& topology) {
  // package -> numa -> cores in order.
  std::map<int, std::map<int, std::vector<int>>> tree;
  for (size_t i = 0; i < topology.cores.size(); ++i) {
    tree[topology.cores[i].package][topology.cores[i].numa].push_back(static_cast<int>(i));
  }
  // Within a package, the order of its cores alternating over its NUMA nodes.
  std::vector<std::vector<int>> packages;
  for (auto& [package, nodes] : tree) {
    std::vector<int> order;
    for (size_t k = 0;; ++k) {
      bool any = false;
      for (auto& [node, cores] : nodes) {
        if (k < cores.size()) {
          order.push_back(cores[k]);
          any = true;
        }
      }
      if (!any) break;
    }
    packages.push_back(order);
  }
  std::vector<int> order;
  for (size_t k = 0;; ++k) {
    bool any = false;
    for (const std::vector<int>& package : packages) {
      if (k < package.size()) {
        order.push_back(package[k]);
        any = true;
      }
    }
    if (!any) break;
  }
  return order;
}

BindingPlan plan_binding(Binding requested, int ranks, const TopologyView& topology) {
  BindingPlan plan;
  plan.cpus.assign(static_cast<size_t>(std::max(ranks, 0)), std::nullopt);
  const int cores = static_cast<int>(topology.cores.size());
  if (requested == Binding::kNone) {
    plan.summary = "not binding (--bind-to none)";
    return plan;
  }
  if (cores == 0) {
    plan.summary = "not binding: the topology shows no usable core";
    return plan;
  }
  if (requested == Binding::kAuto && ranks > cores) {
    plan.summary = "not binding: " + std::to_string(ranks) + " ranks on " + std::to_string(cores) +
                   " cores (the scheduler may move them; --bind-to core forces a core each, shared)";
    return plan;
  }
  if (requested == Binding::kNuma) {
    std::map<int, rcc::CpuSet> nodes;  // by NUMA node, in spreading order of their first core
    std::vector<int> node_order;
    for (int core : spread_order(topology)) {
      const CoreView& view = topology.cores[static_cast<size_t>(core)];
      if (nodes.find(view.numa) == nodes.end()) node_order.push_back(view.numa);
      nodes[view.numa].unite(view.cpus);
    }
    for (int r = 0; r < ranks; ++r)
      plan.cpus[static_cast<size_t>(r)] = nodes[node_order[static_cast<size_t>(r) % node_order.size()]];
    plan.summary = "bound to NUMA nodes (" + std::to_string(node_order.size()) + " nodes)";
    return plan;
  }
  const std::vector<int> order = spread_order(topology);
  for (int r = 0; r < ranks; ++r)
    plan.cpus[static_cast<size_t>(r)] = topology.cores[static_cast<size_t>(order[static_cast<size_t>(r % cores)])].cpus;
  plan.summary = ranks > cores ? "bound to cores, " + std::to_string(ranks) + " ranks sharing " + std::to_string(cores)
                               : "bound to a core each (" + std::to_string(cores) + " cores available)";
  return plan;
}

}  // namespace rccrun
