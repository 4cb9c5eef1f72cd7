#include "report.h"

#include <cerrno>
#include <cmath>
#include <cstring>

namespace rccbench {
namespace {

std::string json_string(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      quoted += escaped;
    } else {
      quoted += c;
    }
  }
  return quoted + "\"";
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char text[64];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

std::string json_result(const Result& r) {
  return "{\"time_us\": " + json_number(r.time_us) + ", \"algbw_GBps\": " + json_number(r.algbw) +
         ", \"busbw_GBps\": " + json_number(r.busbw) + ", \"wrong\": " + std::to_string(r.wrong) + "}";
}

void print_result(std::FILE* out, const Result& r) {
  char wrong[32];
  if (r.wrong < 0)
    std::snprintf(wrong, sizeof wrong, "N/A");
  else
    std::snprintf(wrong, sizeof wrong, "%lld", r.wrong);
  std::fprintf(out, "  %8.2f  %6.2f  %6.2f  %6s", r.time_us, r.algbw, r.busbw, wrong);
}

}  // namespace

void print_collective_header(std::FILE* out) {
  std::fprintf(out, "#%68s%32s\n", "out-of-place", "in-place");
  std::fprintf(out, "#%11s  %12s  %8s  %6s  %4s  %8s  %6s  %6s  %6s  %8s  %6s  %6s  %6s  %7s  %7s\n", "size", "count",
               "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong",
               "memcpy", "memcpy");
  std::fprintf(out, "#%11s  %12s  %8s  %6s  %4s  %8s  %6s  %6s  %6s  %8s  %6s  %6s  %6s  %7s  %7s\n", "(B)",
               "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", "1 core",
               "all");
}

void print_collective_row(std::FILE* out, const Row& row) {
  std::fprintf(out, "%12zu  %12zu  %8s  %6s  %4d", row.bytes, row.count, row.type.c_str(), row.redop.c_str(), row.root);
  print_result(out, row.out_of_place);
  if (row.has_in_place)
    print_result(out, row.in_place);
  else
    std::fprintf(out, "  %8s  %6s  %6s  %6s", "N/A", "N/A", "N/A", "N/A");
  for (const double rate : {row.memcpy_gbs, row.memcpy_everyone_gbs}) {
    if (rate > 0) {
      std::fprintf(out, "  %7.2f", rate);
    } else {
      std::fprintf(out, "  %7s", "-");
    }
  }
  std::fprintf(out, "\n");
}

void print_barrier_row(std::FILE* out, const Row& row) {
  std::fprintf(out, "# barrier: %.2f us (average over iterations of the slowest rank)\n", row.out_of_place.time_us);
}

void print_p2p_header(std::FILE* out, const std::string& mode, int window) {
  if (mode == "latency")
    std::fprintf(out, "# OSU-style latency test (ranks 0 and 1)\n# Size       Latency (us)\n");
  else
    std::fprintf(out, "# OSU-style bandwidth test, window %d (ranks 0 and 1)\n# Size      Bandwidth (MB/s)\n", window);
}

void print_p2p_row(std::FILE* out, const Row& row) {
  if (row.latency_us >= 0)
    std::fprintf(out, "%-10zu  %18.2f\n", row.bytes, row.latency_us);
  else
    std::fprintf(out, "%-10zu  %18.2f\n", row.bytes, row.bandwidth_mbs);
}

bool write_json(const std::string& path, const std::vector<std::pair<std::string, std::string>>& meta,
                const std::vector<Row>& rows, std::string* error) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) {
    *error = "-J " + path + ": " + std::strerror(errno);
    return false;
  }
  std::fprintf(file, "{\n  \"meta\": {");
  for (size_t i = 0; i < meta.size(); ++i) {
    std::fprintf(file, "%s%s: %s", i ? ", " : "", json_string(meta[i].first).c_str(),
                 json_string(meta[i].second).c_str());
  }
  std::fprintf(file, "},\n  \"rows\": [");
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    std::string line = "{\"collective\": " + json_string(row.collective) + ", \"size\": " + std::to_string(row.bytes);
    if (row.latency_us >= 0) {
      line += ", \"latency_us\": " + json_number(row.latency_us);
    } else if (row.bandwidth_mbs >= 0) {
      line += ", \"bandwidth_MBps\": " + json_number(row.bandwidth_mbs);
    } else {
      line += ", \"count\": " + std::to_string(row.count) + ", \"type\": " + json_string(row.type) +
              ", \"redop\": " + json_string(row.redop) + ", \"root\": " + std::to_string(row.root) +
              ", \"out_of_place\": " + json_result(row.out_of_place) +
              ", \"in_place\": " + (row.has_in_place ? json_result(row.in_place) : std::string("null"));
      if (row.memcpy_gbs > 0) line += ", \"memcpy_GBps\": " + json_number(row.memcpy_gbs);
      if (row.memcpy_everyone_gbs > 0) line += ", \"memcpy_everyone_GBps\": " + json_number(row.memcpy_everyone_gbs);
    }
    line += "}";
    std::fprintf(file, "%s\n    %s", i ? "," : "", line.c_str());
  }
  std::fprintf(file, "\n  ]\n}\n");
  if (std::fclose(file) != 0) {
    *error = "-J " + path + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace rccbench
