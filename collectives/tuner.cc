#include "collectives/tuner.h"

#include <array>
#include <string>

#include "base/log.h"
#include "base/settings.h"

namespace rcc::collectives {
namespace {

// Parsed RCC_ALGO: one optional forced row per collective.
struct Overrides {
  std::string source;
  const AlgorithmRow* forced[kNumKinds] = {};
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
    std::string kinds;
    for (int k = 0; k < kNumKinds; ++k) {
      if (kind_text == kind_name(static_cast<Kind>(k))) kind = k;
      kinds += std::string(k == 0 ? "" : ", ") + kind_name(static_cast<Kind>(k));
    }
    if (kind < 0) {
      return fail(RCC_ERR_INVALID_ARGUMENT, "RCC_ALGO='%s': unknown collective '%s' (%s)", text.c_str(),
                  kind_text.c_str(), kinds.c_str());
    }
    const AlgorithmRow* row = find_algorithm(static_cast<Kind>(kind), algorithm_text);
    if (row == nullptr) {
      return fail(RCC_ERR_INVALID_ARGUMENT, "RCC_ALGO='%s': unknown %s algorithm '%s' (one of: %s)", text.c_str(),
                  kind_text.c_str(), algorithm_text.c_str(), algorithm_names(static_cast<Kind>(kind)).c_str());
    }
    parsed.forced[kind] = row;
  }
  *out = parsed;
  return RCC_SUCCESS;
}

// The last RCC_ALGO value parsed on this thread (collectives are issued from few threads). One
// thread-local, reached once per call: each access is a __tls_get_addr call in a shared library.
struct ParsedOverrides {
  Overrides overrides;
  bool parsed = false;
};
thread_local ParsedOverrides t_overrides;

}  // namespace

double estimate_seconds(const AlgorithmRow& row, size_t bytes, int ranks) {
  if (ranks <= 1 || row.cost == nullptr) return 0.0;
  return row.cost(bytes, ranks);
}

const AlgorithmRow& model_choice(Kind kind, size_t bytes, int ranks, bool shared_memory, const Levels* levels) {
  // With a segment its row wins outright: found before any cost is computed, in a table by kind (a
  // 2-rank allreduce takes a few hundred nanoseconds, and pricing every row took a tenth of that).
  if (shared_memory) {
    static const std::array<const AlgorithmRow*, kNumKinds> segment_rows = [] {
      std::array<const AlgorithmRow*, kNumKinds> rows{};
      for (const AlgorithmRow* row : algorithm_table()) {
        const auto k = static_cast<size_t>(row->kind);
        if (row->needs == Needs::kSharedMemory && rows[k] == nullptr) rows[k] = row;  // the first, as before
      }
      return rows;
    }();
    if (const AlgorithmRow* row = segment_rows[static_cast<size_t>(kind)]; row != nullptr) return *row;
  }
  const AlgorithmRow* best = nullptr;
  double best_time = 0;
  for (const AlgorithmRow* row : algorithm_table()) {
    if (row->kind != kind || row->needs == Needs::kSharedMemory) continue;
    if (row->needs == Needs::kLevels && levels == nullptr) continue;
    const double t =
        row->needs == Needs::kLevels ? row->levels_cost(bytes, *levels) : estimate_seconds(*row, bytes, ranks);
    if (best == nullptr || t < best_time) {
      best = row;
      best_time = t;
    }
  }
  return *best;  // every collective has a message-based row
}

Status choose_algorithm(Kind kind, size_t bytes, int ranks, bool shared_memory, const AlgorithmRow** out) {
  return choose_algorithm(kind, bytes, ranks, shared_memory, nullptr, out);
}

Status choose_algorithm(Kind kind, size_t bytes, int ranks, bool shared_memory, const Levels* levels,
                        const AlgorithmRow** out) {
  static const settings::Setting& algo = settings::find("RCC_ALGO");
  const char* text = settings::per_call(algo);
  ParsedOverrides& cached = t_overrides;
  if (!cached.parsed || cached.overrides.source != text) {
    Overrides parsed;
    RCC_RETURN_IF_ERROR(parse_overrides(text, &parsed));
    cached.overrides = parsed;
    cached.parsed = true;
  }
  const AlgorithmRow* forced = cached.overrides.forced[static_cast<int>(kind)];
  const AlgorithmRow& row = forced != nullptr ? *forced : model_choice(kind, bytes, ranks, shared_memory, levels);
  if (row.needs == Needs::kSharedMemory && !shared_memory) {
    return fail(RCC_ERR_INVALID_USAGE,
                "RCC_ALGO='%s' asks for %s:%s, but this communicator has no shared-memory segment (ranks on "
                "several hosts, RCC_SHM=0, or /dev/shm unusable: RCC_DEBUG=INFO says which)",
                text, kind_name(kind), row.name);
  }
  if (row.needs == Needs::kLevels && levels == nullptr) {
    return fail(RCC_ERR_INVALID_USAGE,
                "RCC_ALGO='%s' asks for %s:%s, but this communicator has no levels (its ranks are on one host, or "
                "one per host, or RCC_HIERARCHY=0, or a host could not set up shared memory: RCC_DEBUG=INFO "
                "says which)",
                text, kind_name(kind), row.name);
  }
  RCC_INFO("%s of %zu bytes on %d ranks: %s (%s)", kind_name(kind), bytes, ranks, row.name,
           forced != nullptr ? "RCC_ALGO" : "cost model");
  *out = &row;
  return RCC_SUCCESS;
}

}  // namespace rcc::collectives
