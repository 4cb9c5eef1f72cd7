// rccrun's placement of ranks on cores (launcher/binding.h): which cores, when not to bind, and
// that the CPUs rccrun may use (a Slurm allocation, a taskset) bound the choice.
#include <gtest/gtest.h>
#include <sched.h>

#include <set>

#include "binding.h"

namespace rccrun {
namespace {

// packages x nodes per package x cores per node, one CPU per core, numbered in that order.
TopologyView machine(int packages, int nodes, int cores) {
  TopologyView view;
  int cpu = 0;
  for (int p = 0; p < packages; ++p) {
    for (int n = 0; n < nodes; ++n) {
      for (int c = 0; c < cores; ++c) {
        CoreView core;
        core.cpus.add(cpu++);
        core.package = p;
        core.numa = p * nodes + n;
        view.cores.push_back(core);
      }
    }
  }
  return view;
}

int only_cpu(const rcc::CpuSet& set) {
  EXPECT_EQ(set.count(), 1);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (set.has(cpu)) return cpu;
  }
  return -1;
}

TEST(Binding, AutoGivesEachRankItsOwnCoreSpreadOverPackagesAndNodes) {
  const TopologyView topology = machine(2, 2, 2);  // CPUs 0-3 on package 0 (nodes 0, 1), 4-7 on package 1
  const BindingPlan plan = plan_binding(Binding::kAuto, 4, topology);
  ASSERT_EQ(plan.cpus.size(), 4u);
  std::vector<int> cpus;
  for (const auto& cpu : plan.cpus) {
    ASSERT_TRUE(cpu.has_value());
    cpus.push_back(only_cpu(*cpu));
  }
  // Package 0 node 0, package 1 node 2, package 0 node 1, package 1 node 3.
  EXPECT_EQ(cpus, (std::vector<int>{0, 4, 2, 6}));
  const BindingPlan all = plan_binding(Binding::kAuto, 8, topology);
  std::set<int> distinct;
  for (const auto& cpu : all.cpus) distinct.insert(only_cpu(*cpu));
  EXPECT_EQ(distinct.size(), 8u) << "8 ranks on 8 cores share none";
}

TEST(Binding, AutoLeavesRanksUnboundWhenTheyOutnumberCores) {
  const BindingPlan plan = plan_binding(Binding::kAuto, 3, machine(1, 1, 2));
  for (const auto& cpu : plan.cpus) EXPECT_FALSE(cpu.has_value());
  EXPECT_NE(plan.summary.find("3 ranks on 2 cores"), std::string::npos) << plan.summary;
}

TEST(Binding, NoneNeverBindsCoreAlwaysDoesAndNumaBindsNodes) {
  for (const auto& cpu : plan_binding(Binding::kNone, 2, machine(1, 1, 4)).cpus) EXPECT_FALSE(cpu.has_value());
  const BindingPlan shared = plan_binding(Binding::kCore, 3, machine(1, 1, 2));
  ASSERT_EQ(shared.cpus.size(), 3u);
  EXPECT_EQ(only_cpu(*shared.cpus[0]), 0);
  EXPECT_EQ(only_cpu(*shared.cpus[1]), 1);
  EXPECT_EQ(only_cpu(*shared.cpus[2]), 0) << "with more ranks than cores, core binding wraps around";
  const BindingPlan numa = plan_binding(Binding::kNuma, 3, machine(2, 1, 2));  // nodes {0,1} and {2,3}
  ASSERT_EQ(numa.cpus.size(), 3u);
  EXPECT_EQ(numa.cpus[0]->to_text(), "0-1");
  EXPECT_EQ(numa.cpus[1]->to_text(), "2-3");
  EXPECT_EQ(numa.cpus[2]->to_text(), "0-1");
}

TEST(Binding, TheTopologyHoldsOnlyTheCpusThisProcessMayUse) {
  // As under Slurm or taskset: rccrun itself restricted to one CPU sees one core.
  cpu_set_t original;
  ASSERT_EQ(sched_getaffinity(0, sizeof original, &original), 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  int first = 0;
  while (!CPU_ISSET(first, &original)) ++first;
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  const TopologyView restricted = load_topology();
  ASSERT_EQ(sched_setaffinity(0, sizeof original, &original), 0);
  ASSERT_EQ(restricted.cores.size(), 1u);
  EXPECT_EQ(only_cpu(restricted.cores[0].cpus), first);
  const BindingPlan plan = plan_binding(Binding::kAuto, 2, restricted);
  for (const auto& cpu : plan.cpus) EXPECT_FALSE(cpu.has_value()) << "2 ranks on the 1 allowed core: unbound";
  const TopologyView full = load_topology();
  EXPECT_EQ(static_cast<int>(full.cores.size()) >= 1, true);
}

}  // namespace
}  // namespace rccrun
