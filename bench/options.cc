#include "options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace rccbench {
namespace {

struct Named {
  const char* name;
  int value;
};
constexpr Named kDatatypes[] = {
    {"int8", RCC_INT8},     {"uint8", RCC_UINT8},    {"int32", RCC_INT32},  {"uint32", RCC_UINT32},
    {"int64", RCC_INT64},   {"uint64", RCC_UINT64},  {"half", RCC_FLOAT16}, {"bfloat16", RCC_BFLOAT16},
    {"float", RCC_FLOAT32}, {"double", RCC_FLOAT64}, {"int16", RCC_INT16},  {"uint16", RCC_UINT16},
};
constexpr Named kOps[] = {{"sum", RCC_SUM}, {"prod", RCC_PROD}, {"min", RCC_MIN}, {"max", RCC_MAX},
                          {"avg", RCC_AVG}, {"band", RCC_BAND}, {"bor", RCC_BOR}, {"bxor", RCC_BXOR}};
constexpr const char* kDatatypeList = "int8 uint8 int16 uint16 int32 uint32 int64 uint64 half bfloat16 float double";
constexpr const char* kOpList = "sum prod min max avg band bor bxor";

bool parse_int(const std::string& text, long min, long max, long* value) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long parsed = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || parsed < min || parsed > max) return false;
  *value = parsed;
  return true;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    size_t end = text.find(separator, start);
    items.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return items;
}

}  // namespace

const std::vector<std::string>& all_collectives() {
  static const std::vector<std::string> names{
      "allreduce",  "broadcast", "reduce",  "allgather", "reduce_scatter",  "alltoall", "gather", "scatter",
      "allgatherv", "alltoallv", "gatherv", "scatterv",  "reduce_scatterv", "scan",     "exscan", "barrier",
      "sendrecv",   "latency",   "bw"};
  return names;
}

bool is_p2p_mode(const std::string& name) { return name == "latency" || name == "bw"; }

bool parse_datatype(const std::string& text, rcc_datatype_t* datatype) {
  for (const Named& n : kDatatypes) {
    if (text == n.name) {
      *datatype = static_cast<rcc_datatype_t>(n.value);
      return true;
    }
  }
  // Aliases in the library's own spelling.
  if (text == "float32" || text == "fp32") return *datatype = RCC_FLOAT32, true;
  if (text == "float16" || text == "fp16") return *datatype = RCC_FLOAT16, true;
  if (text == "float64") return *datatype = RCC_FLOAT64, true;
  if (text == "bf16") return *datatype = RCC_BFLOAT16, true;
  return false;
}

bool parse_op(const std::string& text, rcc_op_t* op) {
  for (const Named& n : kOps) {
    if (text == n.name) {
      *op = static_cast<rcc_op_t>(n.value);
      return true;
    }
  }
  return false;
}

const char* datatype_name(rcc_datatype_t datatype) {
  for (const Named& n : kDatatypes) {
    if (n.value == datatype) return n.name;
  }
  return "?";
}

const char* op_name(rcc_op_t op) {
  for (const Named& n : kOps) {
    if (n.value == op) return n.name;
  }
  return "?";
}

const char* usage() {
  return "usage: rccrun -n N rcc-bench [options]\n"
         "  -c LIST   collectives, comma separated, or all: allreduce broadcast reduce allgather\n"
         "            reduce_scatter alltoall gather scatter allgatherv alltoallv gatherv scatterv\n"
         "            reduce_scatterv scan exscan barrier sendrecv; point to point (OSU format,\n"
         "            ranks 0 and 1): latency bw                 (default allreduce)\n"
         "  -b SIZE   smallest size in bytes, K/M/G suffixes   (default 8)\n"
         "  -e SIZE   largest size                              (default 32M)\n"
         "  -f F      multiply the size by F each step           (default 2)\n"
         "  -i BYTES  add BYTES each step instead of -f\n"
         "  -n N      timed iterations per size                 (default 20; latency/bw: 1000/100)\n"
         "  -w N      warm-up iterations per size               (default 5; latency/bw: 100/10)\n"
         "  -W N      bw: messages per window (in flight at once) (default 64)\n"
         "  -d TYPE   int8 uint8 int16 uint16 int32 uint32 int64 uint64 half bfloat16 float double\n"
         "                                                      (default float)\n"
         "  -o OP     sum prod min max avg; band bor bxor (integer types) (default sum)\n"
         "  -r ROOT   root of broadcast/reduce/gather(v)/scatter(v) (default 0)\n"
         "  --imbalance F  vector collectives: rank r's block is base*(1+F*(2r/(P-1)-1)) elements,\n"
         "            the total unchanged (0 <= F < 1; default 0: equal blocks)\n"
         "  --split N every collective on N groups at once: rank r in group r % N (rcc_comm_split);\n"
         "            rows time world rank 0's group, #wrong counts every group (default 1: no split)\n"
         "  --buffers malloc|rcc  where the send and receive buffers come from: aligned_alloc\n"
         "            (default) or rcc_mem_alloc, whose buffers the ranks of a host share\n"
         "  -a ALGO   force an algorithm for the selected collectives (RCC_ALGO), e.g. ring, tree\n"
         "  -J FILE   also write every row as JSON to FILE\n"
         "  -z 0|1    check results (#wrong column; default 1)\n"
         "  -S STAT   mean (default: as nccl-tests) or median of the per-iteration times\n"
         "  -h        this help\n"
         "Exit status 1 when a result is wrong or a call fails.\n";
}

bool parse_command_line(int argc, char** argv, Options* options, std::string* error) {
  Options parsed;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "-h" || flag == "--help") {
      parsed.help = true;
      continue;
    }
    if (flag.rfind("--imbalance", 0) == 0 || flag.rfind("--split", 0) == 0 || flag.rfind("--buffers", 0) == 0) {
      // --imbalance F, --imbalance=F, --split N, --split=N, --buffers B, --buffers=B
      const size_t equals = flag.find('=');
      const std::string name = flag.substr(0, equals);
      if (name != "--imbalance" && name != "--split" && name != "--buffers") {
        *error = "unknown option '" + flag + "'";
        return false;
      }
      std::string value;
      if (equals != std::string::npos) {
        value = flag.substr(equals + 1);
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        *error = name + " needs a value";
        return false;
      }
      const std::string bad = name + ": invalid value '" + value + "'";
      if (name == "--buffers") {
        if (value != "malloc" && value != "rcc") return *error = bad + " (malloc or rcc)", false;
        parsed.rcc_buffers = value == "rcc";
      } else if (name == "--imbalance") {
        char* end = nullptr;
        parsed.imbalance = std::strtod(value.c_str(), &end);
        if (value.empty() || *end != '\0' || !(parsed.imbalance >= 0 && parsed.imbalance < 1)) {
          return *error = bad + " (a fraction 0 <= F < 1)", false;
        }
      } else {
        long number = 0;
        if (!parse_int(value, 1, 1000000, &number)) return *error = bad + " (a group count >= 1)", false;
        parsed.split = static_cast<int>(number);
      }
      continue;
    }
    if (flag.size() != 2 || flag[0] != '-' || std::strchr("bcdefinwWoarJzS", flag[1]) == nullptr) {
      *error = "unknown option '" + flag + "'";
      return false;
    }
    if (i + 1 >= argc) {
      *error = flag + " needs a value";
      return false;
    }
    const std::string value = argv[++i];
    const std::string bad = flag + ": invalid value '" + value + "'";
    long number = 0;
    switch (flag[1]) {
      case 'b':
        if (!parse_size(value, &parsed.min_bytes)) return *error = bad + " (a size such as 8, 64K, 1M)", false;
        break;
      case 'e':
        if (!parse_size(value, &parsed.max_bytes)) return *error = bad + " (a size such as 8, 64K, 1M)", false;
        break;
      case 'i':
        if (!parse_size(value, &parsed.increment) || parsed.increment == 0) return *error = bad + " (bytes > 0)", false;
        break;
      case 'f': {
        char* end = nullptr;
        parsed.factor = std::strtod(value.c_str(), &end);
        if (*end != '\0' || !(parsed.factor > 1.0) || !std::isfinite(parsed.factor)) {
          return *error = bad + " (a factor > 1)", false;
        }
        break;
      }
      case 'n':
        if (!parse_int(value, 1, 100000000, &number)) return *error = bad + " (iterations >= 1)", false;
        parsed.iters = static_cast<int>(number);
        parsed.iters_given = true;
        break;
      case 'w':
        if (!parse_int(value, 0, 100000000, &number)) return *error = bad + " (iterations >= 0)", false;
        parsed.warmup = static_cast<int>(number);
        parsed.warmup_given = true;
        break;
      case 'W':
        if (!parse_int(value, 1, 4096, &number)) return *error = bad + " (a window of 1..4096 messages)", false;
        parsed.window = static_cast<int>(number);
        break;
      case 'r':
        if (!parse_int(value, 0, 1000000, &number)) return *error = bad + " (a rank >= 0)", false;
        parsed.root = static_cast<int>(number);
        break;
      case 'd':
        if (!parse_datatype(value, &parsed.datatype)) {
          return *error = bad + " (" + kDatatypeList + ")", false;
        }
        break;
      case 'o':
        if (!parse_op(value, &parsed.op)) return *error = bad + " (" + kOpList + ")", false;
        break;
      case 'a':
        if (value.empty()) return *error = bad, false;
        parsed.algorithm = value;
        break;
      case 'J':
        if (value.empty()) return *error = bad, false;
        parsed.json_path = value;
        break;
      case 'S':
        if (value != "mean" && value != "median") return *error = bad + " (mean or median)", false;
        parsed.median = value == "median";
        break;
      case 'z':
        if (value != "0" && value != "1") return *error = bad + " (0 or 1)", false;
        parsed.check = value == "1";
        break;
      case 'c': {
        parsed.collectives.clear();
        for (const std::string& name : split(value, ',')) {
          if (name == "all") {
            for (const std::string& c : all_collectives()) parsed.collectives.push_back(c);
            continue;
          }
          bool known = false;
          for (const std::string& c : all_collectives()) known = known || c == name;
          if (!known) {
            std::string known_names;
            for (const std::string& c : all_collectives()) known_names += c + " ";
            *error = "-c: unknown collective '" + name + "' (" + known_names + "all)";
            return false;
          }
          parsed.collectives.push_back(name);
        }
        break;
      }
    }
  }
  if (parsed.min_bytes > parsed.max_bytes) {
    *error = "-b " + std::to_string(parsed.min_bytes) + " is larger than -e " + std::to_string(parsed.max_bytes);
    return false;
  }
  *options = parsed;
  return true;
}

std::string algorithm_setting(const Options& options) {
  if (options.algorithm.empty() || options.algorithm.find(':') != std::string::npos) return options.algorithm;
  std::string setting;
  for (const std::string& c : options.collectives) {
    if (c == "sendrecv" || is_p2p_mode(c)) continue;
    if (!setting.empty()) setting += ',';
    setting += c + ":" + options.algorithm;
  }
  return setting;
}

}  // namespace rccbench
