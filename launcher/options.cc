#include "options.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>

namespace rccrun {
namespace {

bool parse_positive(const std::string& text, int* value) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long parsed = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || parsed < 1 || parsed > 1000000) return false;
  *value = static_cast<int>(parsed);
  return true;
}

bool valid_variable_name(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

std::string trim(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  size_t end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

// "host" or "host:N".
bool parse_host_item(const std::string& item, HostSlots* out, std::string* error) {
  HostSlots host;
  size_t colon = item.rfind(':');
  // An IPv6 literal has several colons; only "[v6]:N" carries slots then.
  bool has_slots =
      colon != std::string::npos && (item.find(':') == colon || (item[0] == '[' && item[colon - 1] == ']'));
  host.host = has_slots ? item.substr(0, colon) : item;
  if (!host.host.empty() && host.host.front() == '[' && host.host.back() == ']') {
    host.host = host.host.substr(1, host.host.size() - 2);
  }
  if (host.host.empty()) {
    *error = "empty host name in '" + item + "'";
    return false;
  }
  if (has_slots && !parse_positive(item.substr(colon + 1), &host.slots)) {
    *error = "invalid slot count in '" + item + "'";
    return false;
  }
  *out = host;
  return true;
}

// Merges a host given twice (as mpirun does) so local ranks are counted per host.
void add_host(const HostSlots& host, std::vector<HostSlots>* hosts) {
  for (HostSlots& existing : *hosts) {
    if (existing.host == host.host) {
      existing.slots += host.slots;
      return;
    }
  }
  hosts->push_back(host);
}

}  // namespace

const char* usage() {
  return "usage: rccrun -n N [options] program [args...]\n"
         "Starts N ranks of program with RCC_RANK, RCC_SIZE, RCC_LOCAL_RANK, RCC_LOCAL_SIZE, RCC_STORE_ADDR and\n"
         "RCC_JOB_SECRET set; rccrun hosts the rendezvous store.\n"
         "  -n, -np N              number of ranks (default: the hosts' total slots)\n"
         "  -H, --host H1:S,H2:S   hosts and their slots (default: N ranks on this host)\n"
         "  --hostfile FILE        lines 'host slots=N' or 'host:N'; '#' comments\n"
         "  --rsh CMD              remote start command (default ssh); run as CMD host 'command string'\n"
         "  -x VAR[,VAR]           forward VAR's value to every rank (repeatable; -x VAR=VAL sets it)\n"
         "  --env VAR=VAL          set VAR for every rank (repeatable)\n"
         "  --tag-output           prefix every output line with [rank]\n"
         "  --bind-to auto|core|numa|none\n"
         "                         auto (default): a core each, spread over packages and NUMA nodes,\n"
         "                         when a host runs no more ranks than it has cores; else unbound\n"
         "  --report-bindings      print each local rank's CPUs before starting\n"
         "  --timeout SEC          stop the job after SEC seconds (exit status 124)\n"
         "  --failure-grace SEC    after a rank fails, let the others exit by themselves for SEC seconds\n"
         "                         (default 10; 0: at once), then SIGTERM, then SIGKILL 3 s later\n"
         "  --display-map          print where each rank runs before starting\n"
         "  --[no-]dump-on-timeout after a failed job, print where each rank was stuck from the flight\n"
         "                         recorders the ranks wrote (default on); SIGUSR1 to rccrun prints it\n"
         "                         for a running job\n"
         "  -h, --help             this help\n"
         "  --version              print the version\n"
         "Local ranks inherit rccrun's environment; remote ones get only the RCC_* variables, -x and --env.\n"
         "Exit status: 0 when every rank exits 0; else the first failing rank's status (128+signal).\n";
}

bool parse_command_line(int argc, const char* const* argv, Options* options, std::string* error) {
  Options parsed;
  int i = 1;
  // Takes the option's value from "--opt=value" or the next argument.
  auto value_of = [&](const std::string& arg, const std::string& name, std::string* value) {
    if (arg.size() > name.size() && arg.compare(0, name.size() + 1, name + "=") == 0) {
      *value = arg.substr(name.size() + 1);
      return true;
    }
    if (i + 1 >= argc) {
      *error = name + " needs a value";
      return false;
    }
    *value = argv[++i];
    return true;
  };
  auto matches = [](const std::string& arg, const std::string& name) {
    return arg == name || arg.compare(0, name.size() + 1, name + "=") == 0;
  };
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.empty() || arg[0] != '-') break;  // the program
    if (arg == "-h" || arg == "--help") {
      parsed.help = true;
    } else if (arg == "--version" || arg == "-V") {
      parsed.version = true;
    } else if (arg == "--tag-output") {
      parsed.tag_output = true;
    } else if (arg == "--display-map") {
      parsed.display_map = true;
    } else if (arg == "--dump-on-timeout") {
      parsed.dump_on_timeout = true;
    } else if (arg == "--no-dump-on-timeout") {
      parsed.dump_on_timeout = false;
    } else if (matches(arg, "-n") || matches(arg, "-np") || matches(arg, "--np") || matches(arg, "-c")) {
      std::string name = arg.substr(0, arg.find('='));
      if (!value_of(arg, name, &value)) return false;
      if (!parse_positive(value, &parsed.ranks)) {
        *error = name + ": '" + value + "' is not a positive number of ranks";
        return false;
      }
    } else if (matches(arg, "-H") || matches(arg, "--host")) {
      std::string name = arg.substr(0, arg.find('='));
      if (!value_of(arg, name, &value)) return false;
      if (!parse_host_list(value, &parsed.hosts, error)) {
        *error = name + ": " + *error;
        return false;
      }
    } else if (matches(arg, "--hostfile") || matches(arg, "--machinefile")) {
      std::string name = arg.substr(0, arg.find('='));
      if (!value_of(arg, name, &value)) return false;
      FILE* file = std::fopen(value.c_str(), "r");
      if (file == nullptr) {
        *error = name + ": cannot open '" + value + "': " + std::strerror(errno);
        return false;
      }
      std::string text;
      char buffer[4096];
      size_t n;
      while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, n);
      std::fclose(file);
      if (!parse_hostfile(text, &parsed.hosts, error)) {
        *error = value + ": " + *error;
        return false;
      }
    } else if (matches(arg, "--rsh") || matches(arg, "--launch-agent")) {
      if (!value_of(arg, arg.substr(0, arg.find('=')), &value)) return false;
      if (trim(value).empty()) {
        *error = "--rsh: empty command";
        return false;
      }
      parsed.rsh = value;
    } else if (matches(arg, "-x")) {
      if (!value_of(arg, "-x", &value)) return false;
      std::stringstream list(value);
      std::string item;
      bool any = false;
      while (std::getline(list, item, ',')) {
        size_t equals = item.find('=');
        std::string name = item.substr(0, equals);
        if (!valid_variable_name(name)) {
          *error = "-x: '" + item + "' is not a variable name";
          return false;
        }
        if (equals == std::string::npos) {
          parsed.forwarded.push_back(name);
        } else {
          parsed.settings.emplace_back(name, item.substr(equals + 1));
        }
        any = true;
      }
      if (!any) {
        *error = "-x: no variable given";
        return false;
      }
    } else if (matches(arg, "--env")) {
      if (!value_of(arg, "--env", &value)) return false;
      size_t equals = value.find('=');
      if (equals == std::string::npos || !valid_variable_name(value.substr(0, equals))) {
        *error = "--env: '" + value + "' is not VAR=VALUE";
        return false;
      }
      parsed.settings.emplace_back(value.substr(0, equals), value.substr(equals + 1));
    } else if (matches(arg, "--bind-to")) {
      if (!value_of(arg, "--bind-to", &value)) return false;
      if (value == "core") {
        parsed.binding = Binding::kCore;
      } else if (value == "none") {
        parsed.binding = Binding::kNone;
      } else if (value == "numa") {
        parsed.binding = Binding::kNuma;
      } else if (value == "auto") {
        parsed.binding = Binding::kAuto;
      } else {
        *error = "--bind-to: '" + value + "' is not auto, core, numa or none";
        return false;
      }
    } else if (arg == "--report-bindings") {
      parsed.report_bindings = true;
    } else if (matches(arg, "--timeout")) {
      if (!value_of(arg, "--timeout", &value)) return false;
      char* end = nullptr;
      errno = 0;
      double seconds = std::strtod(value.c_str(), &end);
      if (value.empty() || errno != 0 || *end != '\0' || !(seconds > 0) || seconds > 1e7) {
        *error = "--timeout: '" + value + "' is not a positive number of seconds";
        return false;
      }
      parsed.timeout_s = seconds;
    } else if (matches(arg, "--failure-grace")) {
      if (!value_of(arg, "--failure-grace", &value)) return false;
      char* end = nullptr;
      errno = 0;
      double seconds = std::strtod(value.c_str(), &end);
      if (value.empty() || errno != 0 || *end != '\0' || !(seconds >= 0) || seconds > 1e7) {
        *error = "--failure-grace: '" + value + "' is not a number of seconds >= 0";
        return false;
      }
      parsed.failure_grace_s = seconds;
    } else {
      *error = "unknown option '" + arg + "'";
      return false;
    }
  }
  for (; i < argc; ++i) parsed.command.emplace_back(argv[i]);
  if (!parsed.help && !parsed.version && parsed.command.empty()) {
    *error = "no program given";
    return false;
  }
  *options = std::move(parsed);
  return true;
}

bool parse_host_list(const std::string& text, std::vector<HostSlots>* hosts, std::string* error) {
  std::vector<HostSlots> parsed = *hosts;
  std::stringstream list(text);
  std::string item;
  bool any = false;
  while (std::getline(list, item, ',')) {
    item = trim(item);
    if (item.empty()) continue;
    HostSlots host;
    if (!parse_host_item(item, &host, error)) return false;
    add_host(host, &parsed);
    any = true;
  }
  if (!any) {
    *error = "no hosts in '" + text + "'";
    return false;
  }
  *hosts = std::move(parsed);
  return true;
}

bool parse_hostfile(const std::string& text, std::vector<HostSlots>* hosts, std::string* error) {
  std::vector<HostSlots> parsed = *hosts;
  std::stringstream lines(text);
  std::string line;
  int number = 0;
  bool any = false;
  while (std::getline(lines, line)) {
    ++number;
    line = trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    std::stringstream words(line);
    std::string name;
    words >> name;
    HostSlots host;
    if (!parse_host_item(name, &host, error)) {
      *error = "line " + std::to_string(number) + ": " + *error;
      return false;
    }
    std::string word;
    while (words >> word) {
      if (word.compare(0, 6, "slots=") == 0 && parse_positive(word.substr(6), &host.slots)) continue;
      if (word.compare(0, 10, "max_slots=") == 0) continue;  // Open MPI's; no oversubscription here
      *error = "line " + std::to_string(number) + ": cannot parse '" + word + "' (expected slots=N)";
      return false;
    }
    add_host(host, &parsed);
    any = true;
  }
  if (!any) {
    *error = "no hosts in the hostfile";
    return false;
  }
  *hosts = std::move(parsed);
  return true;
}

bool place_ranks(int ranks, const std::vector<HostSlots>& hosts, std::vector<Placement>* placement,
                 std::string* error) {
  std::vector<HostSlots> effective = hosts;
  if (effective.empty()) {
    if (ranks < 1) {
      *error = "give the number of ranks with -n N";
      return false;
    }
    effective.push_back({"localhost", ranks});
  }
  int total = 0;
  for (const HostSlots& h : effective) total += h.slots;
  if (ranks == 0) ranks = total;
  if (ranks > total) {
    *error = "-n " + std::to_string(ranks) + " ranks but the hosts offer only " + std::to_string(total) + " slots";
    return false;
  }
  std::vector<Placement> result;
  for (const HostSlots& h : effective) {
    int on_host = std::min(h.slots, ranks - static_cast<int>(result.size()));
    for (int i = 0; i < on_host; ++i) result.push_back({h.host, i, on_host});
  }
  *placement = std::move(result);
  return true;
}

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

}  // namespace rccrun
