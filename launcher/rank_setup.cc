#include "rank_setup.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <set>

#include "say.h"

extern char** environ;

namespace rccrun {
bool is_local_host(const std::string& host) {
  if (host == "localhost" || host == "127.0.0.1" || host == "::1") return true;
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return false;
  std::string full = name;
  return host == full || host == full.substr(0, full.find('.'));
}

namespace {

// The program as execve needs it: a path, searched in PATH when it has no slash.
std::optional<std::string> resolve_program(const std::string& program) {
  auto executable = [](const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
  };
  if (program.find('/') != std::string::npos) return executable(program) ? std::optional(program) : std::nullopt;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t colon = dirs.find(':', start);
    std::string dir = dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (executable(candidate)) return candidate;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return std::nullopt;
}

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    if (c == ' ' || c == '\t') {
      if (!word.empty()) words.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

}  // namespace

bool prepare_ranks(const Options& options, const std::vector<Placement>& placement, const std::string& store_address,
                   const std::string& secret, std::vector<Rank>* out) {
  std::vector<Rank> ranks;
  const std::string& program = options.command[0];
  std::optional<std::string> local_path;
  bool any_local = false;
  for (const Placement& p : placement) any_local = any_local || is_local_host(p.host);
  if (any_local) {
    local_path = resolve_program(program);
    if (!local_path) {
      say("cannot start '%s': not found or not executable%s", program.c_str(),
          program.find('/') == std::string::npos ? " (searched PATH)" : "");
      return false;
    }
  }
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) == nullptr) std::strcpy(cwd, "/");
  std::vector<std::pair<std::string, std::string>> remote_settings;  // what remote ranks get besides RCC_*
  for (const std::string& name : options.forwarded) {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) {
      say("warning: -x %s: not set here, not forwarded", name.c_str());
      continue;
    }
    remote_settings.emplace_back(name, value);
  }
  for (const auto& setting : options.settings) remote_settings.push_back(setting);

  int local_ranks = 0;
  for (const Placement& p : placement) local_ranks += is_local_host(p.host) ? 1 : 0;
  const BindingPlan binding = plan_binding(options.binding, local_ranks, load_topology());
  if (options.report_bindings) say("binding: %s", binding.summary.c_str());
  int local_index = 0;
  for (size_t i = 0; i < placement.size(); ++i) {
    Rank rank;
    rank.rank = static_cast<int>(i);
    rank.placement = placement[i];
    rank.local = is_local_host(rank.placement.host);
    std::vector<std::pair<std::string, std::string>> rank_settings = {
        {"RCC_RANK", std::to_string(i)},
        {"RCC_SIZE", std::to_string(placement.size())},
        {"RCC_LOCAL_RANK", std::to_string(rank.placement.local_rank)},
        {"RCC_LOCAL_SIZE", std::to_string(rank.placement.local_size)},
        {"RCC_STORE_ADDR", store_address},
        {"RCC_JOB_SECRET", secret}};
    if (rank.local) {
      // Local ranks inherit everything, with the job's settings replacing any inherited ones.
      std::set<std::string> replaced;
      for (const auto& [name, value] : rank_settings) replaced.insert(name);
      for (const auto& [name, value] : options.settings) replaced.insert(name);
      for (const auto& [name, value] : options.local_settings) replaced.insert(name);
      for (char** e = environ; *e != nullptr; ++e) {
        std::string entry = *e;
        if (replaced.count(entry.substr(0, entry.find('='))) == 0) rank.env.push_back(entry);
      }
      for (const auto& [name, value] : rank_settings) rank.env.push_back(name + "=" + value);
      for (const auto& [name, value] : options.settings) rank.env.push_back(name + "=" + value);
      for (const auto& [name, value] : options.local_settings) rank.env.push_back(name + "=" + value);
      rank.path = *local_path;
      rank.argv = options.command;
      rank.cpus = binding.cpus[static_cast<size_t>(local_index++)];
      if (options.report_bindings) {
        say("rank %d (local %d) bound to CPUs %s", rank.rank, rank.placement.local_rank,
            rank.cpus ? rank.cpus->to_text().c_str() : "(unbound)");
      }
    } else {
      // ssh semantics: one command string for the remote shell. Everything but the secret is on
      // it; the secret comes as the first line of standard input (rccrun writes it into the rsh
      // process's stdin), read by a POSIX sh whatever the remote login shell is.
      std::string command = "cd " + shell_quote(cwd) + " && exec env";
      for (const auto& [name, value] : rank_settings) {
        if (name != "RCC_JOB_SECRET") command += " " + shell_quote(name + "=" + value);
      }
      for (const auto& [name, value] : remote_settings) command += " " + shell_quote(name + "=" + value);
      command +=
          " sh -c " + shell_quote("IFS= read -r RCC_JOB_SECRET && export RCC_JOB_SECRET && exec \"$@\"") + " rcc-rank";
      for (const std::string& word : options.command) command += " " + shell_quote(word);
      rank.stdin_secret = secret + "\n";
      rank.argv = split_words(options.rsh);
      rank.argv.push_back(rank.placement.host);
      rank.argv.push_back(command);
      std::optional<std::string> rsh = resolve_program(rank.argv[0]);
      if (!rsh) {
        say("cannot start ranks on %s: --rsh program '%s' not found", rank.placement.host.c_str(),
            rank.argv[0].c_str());
        return false;
      }
      rank.path = *rsh;
      for (char** e = environ; *e != nullptr; ++e) rank.env.emplace_back(*e);
      if (options.binding != Binding::kNone && options.binding != Binding::kAuto && i == 0) {
        say("warning: --bind-to applies to local ranks only");
      }
    }
    ranks.push_back(std::move(rank));
  }
  *out = std::move(ranks);
  return true;
}
}  // namespace rccrun
