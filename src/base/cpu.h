// The CPUs this process may run on, and the one decision about crowding: whether the ranks of a
// host outnumber the cores they may run on (then a waiting rank yields its core at once instead of
// spinning, because the rank it waits for may need that core to arrive).
#pragma once

#include <sched.h>

#include <string>

namespace rcc {

class CpuSet {
 public:
  // This thread's affinity mask (empty when it cannot be read).
  static CpuSet of_this_thread();
  // Parses the text form of to_text() ("0-3,8,10-11"); empty on malformed text.
  static CpuSet parse(const std::string& text);

  int count() const { return CPU_COUNT(&set_); }
  bool empty() const { return count() == 0; }
  bool has(int cpu) const { return cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &set_); }
  void add(int cpu) {
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &set_);
  }
  void unite(const CpuSet& other) { CPU_OR(&set_, &set_, &other.set_); }
  bool operator==(const CpuSet& other) const { return CPU_EQUAL(&set_, &other.set_) != 0; }
  std::string to_text() const;  // "0-3,8"; "" when empty
  const cpu_set_t& native() const { return set_; }

 private:
  cpu_set_t set_{};
};

// Whether `ranks` ranks of one host outnumber the CPUs they may use together (the union of their
// masks). Unknown CPUs (an empty union) count as crowded: yielding costs latency but never starves
// a rank of its core.
inline bool ranks_outnumber_cores(int ranks, const CpuSet& cpus) { return cpus.empty() || ranks > cpus.count(); }

// The CPU this thread runs on now (-1 if unknown); a vDSO call, cheap enough for every wait.
int current_cpu();

// Names this thread (at most 15 characters shown) for top -H, ps -L, gdb and perf, so that a user
// who sees a busy or sleeping thread in their process can tell that it is rcc's and which one.
void name_this_thread(const char* name);

}  // namespace rcc
