#include "collectives/argument_check.h"

#include <vector>

#include "base/settings.h"

namespace rcc::collectives {
namespace {

// Fields that do not apply to a collective are zero, so they never disagree.
struct Signature {
  uint32_t kind;
  uint32_t datatype;
  uint32_t op;
  int32_t root;
  uint64_t count;
};

bool has_op(Kind kind) {
  return kind == Kind::kAllreduce || kind == Kind::kReduce || kind == Kind::kReduceScatter ||
         kind == Kind::kReduceScatterv || kind == Kind::kScan || kind == Kind::kExscan;
}
bool has_root(Kind kind) {
  return kind == Kind::kBroadcast || kind == Kind::kReduce || kind == Kind::kGather || kind == Kind::kScatter ||
         kind == Kind::kGatherv || kind == Kind::kScatterv;
}

Signature signature_of(const Args& args) {
  Signature s{};
  s.kind = static_cast<uint32_t>(args.kind);
  if (args.kind != Kind::kBarrier) {
    s.datatype = static_cast<uint32_t>(args.datatype);
    if (!is_vector(args.kind)) s.count = args.count;  // vector counts differ between ranks
  }
  if (has_op(args.kind)) s.op = static_cast<uint32_t>(args.op);
  if (has_root(args.kind)) s.root = args.root;
  return s;
}

}  // namespace

Status argument_check_enabled(bool* enabled) {
  static const settings::Setting& check = settings::find("RCC_CHECK");
  const char* value = settings::per_call(check);
  if (value[0] == '0' && value[1] == '\0') {  // the default, on every call: no parsing
    *enabled = false;
    return RCC_SUCCESS;
  }
  std::string parsed;
  RCC_RETURN_IF_ERROR(settings::choice("RCC_CHECK", &parsed));
  *enabled = parsed == "1";
  return RCC_SUCCESS;
}

Status check_arguments(Context& ctx, const Args& args, uint32_t phase) {
  const int ranks = ctx.size(), rank = ctx.rank(), tag = ctx.tag(phase);
  std::vector<Signature> all(ranks);
  all[rank] = signature_of(args);
  {
    RequestSet requests(ctx.engine());
    for (int peer = 0; peer < ranks; ++peer) {
      if (peer == rank) continue;
      RCC_RETURN_IF_ERROR(ctx.post_recv(requests, &all[peer], sizeof(Signature), peer, tag));
    }
    for (int peer = 0; peer < ranks; ++peer) {
      if (peer == rank) continue;
      RCC_RETURN_IF_ERROR(ctx.post_send(requests, &all[rank], sizeof(Signature), peer, tag));
    }
    RCC_RETURN_IF_ERROR(requests.wait_all());
  }
  // Every rank compares the same table against rank 0, so all report the same disagreement.
  const Signature& reference = all[0];
  for (int peer = 1; peer < ranks; ++peer) {
    const Signature& s = all[peer];
    const char* field = nullptr;
    unsigned long long mine = 0, theirs = 0;
    if (s.kind != reference.kind) {
      return fail(RCC_ERR_MISMATCH, "RCC_CHECK: rank %d called %s but rank 0 called %s", peer,
                  kind_name(static_cast<Kind>(s.kind)), kind_name(static_cast<Kind>(reference.kind)));
    } else if (s.count != reference.count) {
      field = "count", mine = s.count, theirs = reference.count;
    } else if (s.datatype != reference.datatype) {
      field = "datatype", mine = s.datatype, theirs = reference.datatype;
    } else if (s.op != reference.op) {
      field = "op", mine = s.op, theirs = reference.op;
    } else if (s.root != reference.root) {
      field = "root", mine = static_cast<unsigned long long>(s.root),
      theirs = static_cast<unsigned long long>(reference.root);
    }
    if (field != nullptr) {
      return fail(RCC_ERR_MISMATCH, "RCC_CHECK: %s: rank %d passed %s %llu but rank 0 passed %llu",
                  kind_name(static_cast<Kind>(reference.kind)), peer, field, mine, theirs);
    }
  }
  return RCC_SUCCESS;
}

}  // namespace rcc::collectives
