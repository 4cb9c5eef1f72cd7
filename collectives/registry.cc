#include "collectives/registry.h"

#include <cstring>
#include <string>

namespace rcc::collectives {

// Each row is defined in its algorithm's file.
extern const AlgorithmRow kAllreduceRing, kAllreduceTree, kAllreduceRecursiveDoubling, kAllreduceShm,
    kAllreduceHierarchical;
extern const AlgorithmRow kBroadcastTree, kBroadcastPipeline, kBroadcastShm, kBroadcastHierarchical;
extern const AlgorithmRow kReduceTree, kReduceShm, kReduceHierarchical;
extern const AlgorithmRow kAllgatherRing, kAllgatherShm, kAllgatherHierarchical;
extern const AlgorithmRow kReduceScatterRing, kReduceScatterShm, kReduceScatterHierarchical;
extern const AlgorithmRow kAlltoallPairwise, kAlltoallShm;
extern const AlgorithmRow kGatherLinear, kGatherShm;
extern const AlgorithmRow kScatterLinear, kScatterShm;
extern const AlgorithmRow kBarrierDissemination, kBarrierShm, kBarrierHierarchical;
extern const AlgorithmRow kAllgathervRing, kAllgathervShm, kAlltoallvPairwise, kAlltoallvShm, kGathervLinear,
    kGathervShm, kScattervLinear, kScattervShm, kReduceScattervRing, kReduceScattervShm;
extern const AlgorithmRow kScanRecursiveDoubling, kScanShm, kExscanRecursiveDoubling, kExscanShm;

std::span<const AlgorithmRow* const> algorithm_table() {
  // Within a collective, the first row is the tuner's fallback when costs tie.
  static const AlgorithmRow* const kTable[] = {
      &kAllreduceRing,
      &kAllreduceTree,
      &kAllreduceRecursiveDoubling,
      &kAllreduceShm,
      &kAllreduceHierarchical,
      &kBroadcastTree,
      &kBroadcastPipeline,
      &kBroadcastShm,
      &kBroadcastHierarchical,
      &kReduceTree,
      &kReduceShm,
      &kReduceHierarchical,
      &kAllgatherRing,
      &kAllgatherShm,
      &kAllgatherHierarchical,
      &kReduceScatterRing,
      &kReduceScatterShm,
      &kReduceScatterHierarchical,
      &kAlltoallPairwise,
      &kAlltoallShm,
      &kGatherLinear,
      &kGatherShm,
      &kScatterLinear,
      &kScatterShm,
      &kBarrierDissemination,
      &kBarrierShm,
      &kBarrierHierarchical,
      &kAllgathervRing,
      &kAllgathervShm,
      &kAlltoallvPairwise,
      &kAlltoallvShm,
      &kGathervLinear,
      &kGathervShm,
      &kScattervLinear,
      &kScattervShm,
      &kReduceScattervRing,
      &kReduceScattervShm,
      &kScanRecursiveDoubling,
      &kScanShm,
      &kExscanRecursiveDoubling,
      &kExscanShm,
  };
  return kTable;
}

namespace {

bool answers_to(const AlgorithmRow& row, const std::string& name) {
  if (name == row.name) return true;
  std::string aliases = row.aliases;
  size_t start = 0;
  while (start < aliases.size()) {
    size_t comma = aliases.find(',', start);
    if (comma == std::string::npos) comma = aliases.size();
    if (aliases.compare(start, comma - start, name) == 0) return true;
    start = comma + 1;
  }
  return false;
}

}  // namespace

const AlgorithmRow* find_algorithm(Kind kind, const std::string& name) {
  for (const AlgorithmRow* row : algorithm_table()) {
    if (row->kind == kind && answers_to(*row, name)) return row;
  }
  return nullptr;
}

std::string algorithm_names(Kind kind) {
  std::string list;
  for (const AlgorithmRow* row : algorithm_table()) {
    if (row->kind != kind) continue;
    if (!list.empty()) list += ", ";
    list += row->name;
  }
  return list;
}

}  // namespace rcc::collectives
