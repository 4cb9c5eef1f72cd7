#include "base/call_report.h"

#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace rcc::report {
namespace {

// key=value fields of one line.
std::map<std::string, std::string> fields(const std::string& line) {
  std::map<std::string, std::string> out;
  std::istringstream words(line);
  std::string word;
  while (words >> word) {
    const size_t eq = word.find('=');
    if (eq != std::string::npos) out[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return out;
}

std::vector<int> parse_ranks(const std::string& list) {
  std::vector<int> ranks;
  if (list.empty() || list == "-") return ranks;
  std::istringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) ranks.push_back(std::atoi(item.c_str()));
  return ranks;
}

long long number(const std::map<std::string, std::string>& f, const char* key, long long fallback) {
  auto it = f.find(key);
  return it == f.end() ? fallback : std::atoll(it->second.c_str());
}

std::string text(const std::map<std::string, std::string>& f, const char* key) {
  auto it = f.find(key);
  return it == f.end() ? std::string() : it->second;
}

std::string seconds(int64_t ms) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f s", static_cast<double>(ms) / 1000.0);
  return buffer;
}

// "allreduce #1834 of comm 2"
std::string collective_name(const Call& c) { return c.op + " #" + std::to_string(c.seq); }

std::string p2p_name(const Call& c) {
  const std::string peer = c.peer < 0 ? std::string("any rank") : "rank " + std::to_string(c.peer);
  return c.op + (c.op == "send" ? " to " : " from ") + peer + " (tag " + std::to_string(c.tag) + ")";
}

// What one rank of a communicator is doing there.
struct Position {
  int rank = 0;                   // in the communicator
  bool dumped = false;            // left a dump
  const Call* latest = nullptr;   // its latest collective on the communicator
  const Call* current = nullptr;  // its running call on the communicator (collective or p2p), if any
  std::string key() const {
    if (!dumped) return "~";  // sorts last
    if (current != nullptr && !current->collective()) return "p2p " + p2p_name(*current);
    if (latest == nullptr) return "none";
    return latest->op + "#" + std::to_string(latest->seq) + " " + latest->state;
  }
};

std::string describe(const std::vector<Position>& group, uint32_t comm) {
  std::vector<int> ranks;
  for (const Position& p : group) ranks.push_back(p.rank);
  const Position& first = group.front();
  std::string who = (ranks.size() == 1 ? "rank " : "ranks ") + rank_ranges(ranks);
  if (!first.dumped) return who + ": no dump (the rank died, or was not asked)";
  std::string line;
  if (first.current != nullptr && !first.current->collective()) {
    line = who + ": in " + p2p_name(*first.current) + ", running " + seconds(first.current->age_ms);
  } else if (first.latest == nullptr) {
    line = who + ": no collective on comm " + std::to_string(comm) + " yet";
  } else if (first.latest->state == "running") {
    line = who + (ranks.size() == 1 ? " is" : " are") + " in " + collective_name(*first.latest) + " of comm " +
           std::to_string(comm) + ", running " + seconds(first.latest->age_ms);
  } else {
    line = who + ": past " + collective_name(*first.latest) + " of comm " + std::to_string(comm) + " (" +
           first.latest->state + "), in no collective of it";
  }
  // What they wait for: the same for all, or rank by rank.
  std::set<std::string> waits;
  for (const Position& p : group) {
    const Call* c = p.current != nullptr ? p.current : p.latest;
    if (c != nullptr && c->state == "running") waits.insert(c->waits_for);
  }
  if (waits.size() == 1 && *waits.begin() != "-" && !waits.begin()->empty()) {
    line += ", waiting for " + std::string(waits.begin()->find(',') == std::string::npos ? "rank " : "ranks ") +
            rank_ranges(parse_ranks(*waits.begin()));
  } else if (waits.size() > 1) {
    std::string each;
    for (const Position& p : group) {
      const Call* c = p.current != nullptr ? p.current : p.latest;
      if (c == nullptr || c->state != "running" || c->waits_for == "-") continue;
      each +=
          (each.empty() ? "" : "; ") + std::to_string(p.rank) + " waits for " + rank_ranges(parse_ranks(c->waits_for));
    }
    if (!each.empty()) line += " (" + each + ")";
  }
  return line;
}

}  // namespace

std::string rank_ranges(const std::vector<int>& input) {
  std::vector<int> ranks = input;
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(ranks[i]);
    if (j > i) out += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}

bool parse_dump(const std::string& dump_text, Dump* out, std::string* error) {
  Dump dump;
  std::istringstream lines(dump_text);
  std::string line;
  bool header = false;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto f = fields(line);
    if (line.rfind("call ", 0) == 0) {
      Call c;
      c.comm = static_cast<uint32_t>(number(f, "comm", 0));
      c.seq = static_cast<uint64_t>(number(f, "seq", 0));
      c.op = text(f, "op");
      c.datatype = text(f, "datatype");
      c.count = static_cast<uint64_t>(number(f, "count", 0));
      c.peer = static_cast<int>(number(f, "peer", -1));
      c.tag = static_cast<int>(number(f, "tag", -1));
      c.state = text(f, "state");
      c.age_ms = number(f, "age_ms", 0);
      c.status = text(f, "status");
      c.waits_for = text(f, "waits_for");
      dump.calls.push_back(c);
    } else if (f.count("members") != 0 && f.count("comm") != 0) {
      dump.comms[static_cast<uint32_t>(number(f, "comm", 0))] = parse_ranks(text(f, "members"));
    } else if (f.count("rank") != 0 && f.count("size") != 0) {
      dump.rank = static_cast<int>(number(f, "rank", -1));
      dump.size = static_cast<int>(number(f, "size", 0));
      dump.pid = static_cast<long>(number(f, "pid", 0));
      dump.host = text(f, "host");
      dump.reason = text(f, "reason");
      header = true;
    }
  }
  if (!header || dump.rank < 0 || dump.size <= 0 || dump.rank >= dump.size) {
    *error = "no 'rank=R size=N' line: not an rcc flight-recorder dump";
    return false;
  }
  *out = std::move(dump);
  return true;
}

std::string dump_file(const std::string& dir, int rank) { return dir + "/rcc-calls." + std::to_string(rank) + ".txt"; }

std::string ready_file(const std::string& dir, int rank) {
  return dir + "/rcc-calls." + std::to_string(rank) + ".ready";
}

std::vector<Dump> read_dump_dir(const std::string& dir, std::vector<std::string>* problems) {
  std::vector<Dump> dumps;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {
    problems->push_back(dir + ": cannot open the directory");
    return dumps;
  }
  std::vector<std::string> names;
  while (dirent* entry = readdir(d)) {
    const std::string name = entry->d_name;
    if (name.rfind("rcc-calls.", 0) == 0 && name.size() > 4 && name.compare(name.size() - 4, 4, ".txt") == 0) {
      names.push_back(name);
    }
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    std::ifstream in(dir + "/" + name);
    std::stringstream content;
    content << in.rdbuf();
    Dump dump;
    std::string error;
    if (!in || !parse_dump(content.str(), &dump, &error)) {
      problems->push_back(dir + "/" + name + ": " + (error.empty() ? "cannot read it" : error));
      continue;
    }
    dumps.push_back(std::move(dump));
  }
  return dumps;
}

std::string format_table(const std::vector<Dump>& dumps) {
  if (dumps.empty()) return "no flight-recorder dumps\n";
  std::map<int, const Dump*> by_rank;
  int job_size = 0;
  std::map<uint32_t, std::vector<int>> comms;
  for (const Dump& d : dumps) {
    by_rank[d.rank] = &d;
    job_size = std::max(job_size, d.size);
    for (const auto& [id, members] : d.comms) comms.emplace(id, members);
  }
  std::ostringstream out;
  for (const auto& [id, members] : comms) {
    std::vector<Position> positions;
    for (size_t r = 0; r < members.size(); ++r) {
      Position p;
      p.rank = static_cast<int>(r);
      auto it = by_rank.find(members[r]);
      if (it != by_rank.end()) {
        p.dumped = true;
        for (const Call& c : it->second->calls) {
          if (c.comm != id) continue;
          if (c.collective() && (p.latest == nullptr || c.seq >= p.latest->seq)) p.latest = &c;
          if (c.state == "running") p.current = &c;
        }
      }
      positions.push_back(p);
    }
    // Group the ranks by where they are; the smallest groups (the odd ones out) first.
    std::map<std::string, std::vector<Position>> groups;
    for (const Position& p : positions) groups[p.key()].push_back(p);
    std::vector<std::vector<Position>> ordered;
    for (auto& [key, group] : groups) ordered.push_back(group);
    std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
      if (a.front().dumped != b.front().dumped) return a.front().dumped;  // missing ranks last
      return a.size() < b.size();
    });
    out << "comm " << id << " (" << members.size() << " ranks";
    if (id != 0) out << ": job ranks " << rank_ranges(members);
    out << ")" << (ordered.size() > 1 ? ", ranks disagree:" : ":") << "\n";
    for (const auto& group : ordered) out << "  " << describe(group, id) << "\n";
  }
  return out.str();
}

}  // namespace rcc::report
