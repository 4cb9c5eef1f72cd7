// rcc-bench's command line (nccl-tests style flags plus the OSU point-to-point modes).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "rcc/rcc.h"
#include "size_arg.h"

namespace rccbench {

struct Options {
  size_t min_bytes = 8;
  size_t max_bytes = 32u << 20;
  double factor = 2;     // -f: next size = size * factor (used when increment is 0)
  size_t increment = 0;  // -i: next size = size + increment
  int iters = 20;
  int warmup = 5;
  bool iters_given = false;  // p2p modes pick OSU-like counts unless -n is given
  bool warmup_given = false;
  int window = 64;  // -W: bw mode's messages in flight per window (OSU's window size)
  std::vector<std::string> collectives{"allreduce"};
  rcc_datatype_t datatype = RCC_FLOAT32;
  rcc_op_t op = RCC_SUM;
  int root = 0;
  std::string algorithm;     // -a: forced through RCC_ALGO
  std::string json_path;     // -J
  bool check = true;         // -z 0 disables the result check
  bool median = false;       // -S median: the median of per-iteration times instead of their mean
  double imbalance = 0;      // --imbalance F: the vector collectives' counts spread by +-F (imbalance.h)
  int split = 1;             // --split N: every collective on N groups at once (rank r in group r % N)
  bool rcc_buffers = false;  // --buffers rcc: the buffers come from rcc_mem_alloc, not aligned_alloc
  bool help = false;
};

// Every collective and point-to-point mode rcc-bench knows, in the order "-c all" runs them.
const std::vector<std::string>& all_collectives();
bool is_p2p_mode(const std::string& name);  // latency, bw (their own OSU tables)

// "8", "64K", "256M", "1G" (binary multiples).
bool parse_datatype(const std::string& text, rcc_datatype_t* datatype);
bool parse_op(const std::string& text, rcc_op_t* op);
const char* datatype_name(rcc_datatype_t datatype);
const char* op_name(rcc_op_t op);

// argv[1..]; false with *error naming the flag on bad input.
bool parse_command_line(int argc, char** argv, Options* options, std::string* error);
// The RCC_ALGO value -a asks for: "coll:algo" for every selected collective (or -a's text when it
// already is a collective:algorithm list).
std::string algorithm_setting(const Options& options);
const char* usage();

}  // namespace rccbench
