#include "collectives/tuner.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/log.h"

namespace rcc::collectives {
namespace {

// Model constants: a message costs kAlpha plus its bytes over kBandwidth; reducing costs bytes
// over kReduceRate. Rough values for a 100 Gb/s RDMA link or shared memory; only ratios matter.
constexpr double kAlpha = 3e-6;         // seconds per message step
constexpr double kBandwidth = 10e9;     // bytes per second per link
constexpr double kReduceRate = 20e9;    // bytes per second through the reduce kernels

struct Candidate {
  Kind kind;
  Algorithm algorithm;
};
// The algorithms each collective has; the first listed is the fallback.
constexpr Candidate kCandidates[] = {
    {Kind::kAllreduce, Algorithm::kRing},          {Kind::kAllreduce, Algorithm::kTree},
    {Kind::kAllreduce, Algorithm::kRecursiveDoubling},
    {Kind::kBroadcast, Algorithm::kTree},          {Kind::kBroadcast, Algorithm::kPipeline},
    {Kind::kReduce, Algorithm::kTree},             {Kind::kAllgather, Algorithm::kRing},
    {Kind::kReduceScatter, Algorithm::kRing},      {Kind::kAlltoall, Algorithm::kPairwise},
    {Kind::kGather, Algorithm::kLinear},           {Kind::kScatter, Algorithm::kLinear},
    {Kind::kBarrier, Algorithm::kDissemination},
    {Kind::kAllreduce, Algorithm::kShm},           {Kind::kBroadcast, Algorithm::kShm},
    {Kind::kReduce, Algorithm::kShm},              {Kind::kAllgather, Algorithm::kShm},
    {Kind::kReduceScatter, Algorithm::kShm},       {Kind::kAlltoall, Algorithm::kShm},
    {Kind::kGather, Algorithm::kShm},              {Kind::kScatter, Algorithm::kShm},
    {Kind::kBarrier, Algorithm::kShm},
};

struct NamedAlgorithm {
  const char* name;
  Algorithm algorithm;
};
constexpr NamedAlgorithm kAlgorithmNames[] = {
    {"ring", Algorithm::kRing},
    {"tree", Algorithm::kTree},
    {"binomial", Algorithm::kTree},
    {"recursive_doubling", Algorithm::kRecursiveDoubling},
    {"rd", Algorithm::kRecursiveDoubling},
    {"pipeline", Algorithm::kPipeline},
    {"chain", Algorithm::kPipeline},
    {"pairwise", Algorithm::kPairwise},
    {"linear", Algorithm::kLinear},
    {"dissemination", Algorithm::kDissemination},
    {"shm", Algorithm::kShm},
};

bool has_algorithm(Kind kind, Algorithm algorithm) {
  for (const Candidate& c : kCandidates) {
    if (c.kind == kind && c.algorithm == algorithm) return true;
  }
  return false;
}

std::string algorithms_of(Kind kind) {
  std::string list;
  for (const Candidate& c : kCandidates) {
    if (c.kind != kind) continue;
    if (!list.empty()) list += ", ";
    list += algorithm_name(c.algorithm);
  }
  return list;
}

double log2_ceil(int ranks) { return ranks <= 1 ? 0.0 : std::ceil(std::log2(static_cast<double>(ranks))); }

double segments_of(double bytes) { return std::max(1.0, std::ceil(bytes / static_cast<double>(kSegmentBytes))); }

// A chain pipelined over S segments: (steps + S - 1) segment times.
double pipelined_chain(double steps, double bytes) {
  const double segments = segments_of(bytes);
  return (steps + segments - 1) * (kAlpha + bytes / segments / kBandwidth);
}

// A binomial tree pipelined over S segments: the pipeline is lg + S - 1 steps deep, but the root
// sends (or receives) every byte lg times, which bounds the bandwidth term.
double pipelined_binomial(double lg, double bytes) {
  return (lg + segments_of(bytes) - 1) * kAlpha + lg * bytes / kBandwidth;
}

// Parsed RCC_ALGO: one optional forced algorithm per collective.
struct Overrides {
  std::string source;
  bool forced[kNumKinds] = {};
  Algorithm algorithm[kNumKinds] = {};
};

Status parse_overrides(const std::string& text, Overrides* out) {
  Overrides parsed;
  parsed.source = text;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(start, comma - start);
    start = comma + 1;
    if (item.empty()) continue;
    const size_t colon = item.find(':');
    if (colon == std::string::npos) {
      return fail(RCC_ERR_INVALID_ARGUMENT, "RCC_ALGO='%s': '%s' is not collective:algorithm", text.c_str(),
                  item.c_str());
    }
    const std::string kind_text = item.substr(0, colon), algorithm_text = item.substr(colon + 1);
    int kind = -1;
    for (int k = 0; k < kNumKinds; ++k) {
      if (kind_text == kind_name(static_cast<Kind>(k))) kind = k;
    }
    if (kind < 0) {
      return fail(RCC_ERR_INVALID_ARGUMENT,
                  "RCC_ALGO='%s': unknown collective '%s' (allreduce, broadcast, reduce, allgather, reduce_scatter, "
                  "alltoall, gather, scatter, barrier)",
                  text.c_str(), kind_text.c_str());
    }
    const NamedAlgorithm* named = nullptr;
    for (const NamedAlgorithm& n : kAlgorithmNames) {
      if (algorithm_text == n.name) named = &n;
    }
    if (named == nullptr || !has_algorithm(static_cast<Kind>(kind), named->algorithm)) {
      return fail(RCC_ERR_INVALID_ARGUMENT, "RCC_ALGO='%s': unknown %s algorithm '%s' (one of: %s)", text.c_str(),
                  kind_text.c_str(), algorithm_text.c_str(), algorithms_of(static_cast<Kind>(kind)).c_str());
    }
    parsed.forced[kind] = true;
    parsed.algorithm[kind] = named->algorithm;
  }
  *out = parsed;
  return RCC_SUCCESS;
}

// The last RCC_ALGO value parsed on this thread (collectives are issued from few threads).
thread_local Overrides t_overrides;
thread_local bool t_overrides_parsed = false;

}  // namespace

const char* algorithm_name(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kRing: return "ring";
    case Algorithm::kTree: return "tree";
    case Algorithm::kRecursiveDoubling: return "recursive_doubling";
    case Algorithm::kPipeline: return "pipeline";
    case Algorithm::kPairwise: return "pairwise";
    case Algorithm::kLinear: return "linear";
    case Algorithm::kDissemination: return "dissemination";
    case Algorithm::kShm: return "shm";
  }
  return "unknown";
}

double estimate_seconds(Kind kind, Algorithm algorithm, size_t bytes, int ranks) {
  const double n = static_cast<double>(bytes), p = static_cast<double>(ranks), lg = log2_ceil(ranks);
  if (ranks <= 1) return 0.0;
  const double reduce_time = n / kReduceRate;
  switch (kind) {
    case Kind::kAllreduce:
      switch (algorithm) {
        case Algorithm::kRing:
          // 2(P-1) steps of n/P; the reduce-scatter half also reduces (P-1)/P of the data.
          return 2 * (p - 1) * (kAlpha + n / p / kBandwidth) + (p - 1) / p * reduce_time;
        case Algorithm::kTree:
          return 2 * pipelined_binomial(lg, n) + lg * reduce_time;
        case Algorithm::kRecursiveDoubling: {
          const bool power_of_two = (ranks & (ranks - 1)) == 0;
          const double steps = lg + (power_of_two ? 0 : 1);  // the fold, before and after
          return steps * (kAlpha + n / kBandwidth + reduce_time);
        }
        default: break;
      }
      break;
    case Kind::kBroadcast:
      if (algorithm == Algorithm::kTree) return pipelined_binomial(lg, n);
      if (algorithm == Algorithm::kPipeline) return pipelined_chain(p - 1, n);
      break;
    case Kind::kReduce: return pipelined_binomial(lg, n) + lg * reduce_time;
    case Kind::kAllgather:
    case Kind::kReduceScatter: return (p - 1) * (kAlpha + n / kBandwidth);
    case Kind::kAlltoall:
    case Kind::kGather:
    case Kind::kScatter: return (p - 1) * (kAlpha + n / kBandwidth);
    case Kind::kBarrier: return lg * kAlpha;
  }
  return 1e30;
}

Algorithm model_choice(Kind kind, size_t bytes, int ranks, bool shared_memory) {
  if (shared_memory) return Algorithm::kShm;
  bool found = false;
  Algorithm best = Algorithm::kRing;
  double best_time = 0;
  for (const Candidate& c : kCandidates) {
    if (c.kind != kind || c.algorithm == Algorithm::kShm) continue;
    const double t = estimate_seconds(kind, c.algorithm, bytes, ranks);
    if (!found || t < best_time) {
      found = true;
      best = c.algorithm;
      best_time = t;
    }
  }
  return best;
}

Status choose_algorithm(Kind kind, size_t bytes, int ranks, bool shared_memory, Algorithm* out) {
  static const config::Setting& algo = config::setting("RCC_ALGO");
  const char* text = config::value_of(algo);
  if (!t_overrides_parsed || t_overrides.source != text) {
    Overrides parsed;
    RCC_RETURN_IF_ERROR(parse_overrides(text, &parsed));
    t_overrides = parsed;
    t_overrides_parsed = true;
  }
  const int k = static_cast<int>(kind);
  const bool forced = t_overrides.forced[k];
  Algorithm algorithm = forced ? t_overrides.algorithm[k] : model_choice(kind, bytes, ranks, shared_memory);
  if (algorithm == Algorithm::kShm && !shared_memory) {
    return fail(RCC_ERR_INVALID_USAGE,
                "RCC_ALGO='%s' asks for %s:shm, but this communicator has no shared-memory segment (ranks on "
                "several hosts, RCC_SHM=0, or /dev/shm unusable: RCC_DEBUG=INFO says which)",
                text, kind_name(kind));
  }
  RCC_INFO("%s of %zu bytes on %d ranks: %s (%s)", kind_name(kind), bytes, ranks, algorithm_name(algorithm),
           forced ? "RCC_ALGO" : "cost model");
  *out = algorithm;
  return RCC_SUCCESS;
}

}  // namespace rcc::collectives
