// rcc-bench's output: nccl-tests tables and OSU tables on stdout (rank 0), every row as JSON.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

namespace rccbench {

struct Result {
  double time_us = 0;   // average per iteration of the slowest rank
  double algbw = 0;     // GB/s
  double busbw = 0;     // GB/s
  long long wrong = 0;  // -1: not checked
};

struct Row {
  std::string collective;
  size_t bytes = 0;
  size_t count = 0;
  std::string type, redop;
  int root = -1;
  bool has_in_place = true;
  Result out_of_place, in_place;
  // One-core memcpy of the same bytes in the same run (GB/s), beside sizes from kMemcpyFromBytes:
  // the memory limit the collective is measured against. 0: not measured.
  double memcpy_gbs = 0;
  // Every rank copying the same bytes at once, the slowest rank's rate (GB/s): what the memory
  // system gives each rank when all of them move data, the limit of a collective that does. 0: not
  // measured (one rank, or a small row).
  double memcpy_everyone_gbs = 0;
  // Point-to-point modes fill these instead (OSU): latency in us, bandwidth in MB/s.
  double latency_us = -1, bandwidth_mbs = -1;
};

constexpr size_t kMemcpyFromBytes = size_t{1} << 20;

void print_collective_header(std::FILE* out);
void print_collective_row(std::FILE* out, const Row& row);
void print_barrier_row(std::FILE* out, const Row& row);
void print_p2p_header(std::FILE* out, const std::string& mode, int window);
void print_p2p_row(std::FILE* out, const Row& row);

// Writes {"meta": {...}, "rows": [...]}; meta is a list of key/value strings. False on I/O error.
bool write_json(const std::string& path, const std::vector<std::pair<std::string, std::string>>& meta,
                const std::vector<Row>& rows, std::string* error);

}  // namespace rccbench
