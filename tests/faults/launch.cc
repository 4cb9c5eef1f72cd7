#include "launch.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>

namespace faults {

using Clock = std::chrono::steady_clock;

Outcome run(const std::vector<std::string>& args, double deadline_s, const std::vector<std::string>& extra_env,
            const std::function<void(pid_t)>& during_run) {
  Outcome result;
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe2 failed";
    return result;
  }
  std::vector<std::string> env_copy = extra_env;  // putenv keeps the pointers
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const auto start = Clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);  // its own group, so a stuck job can be killed whole
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    for (auto& e : env_copy) putenv(e.data());
    execv(argv[0], argv.data());
    _exit(127);
  }
  setpgid(pid, pid);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (during_run) during_run(pid);
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(deadline_s));
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      result.timed_out = true;
      kill(-pid, SIGKILL);
      break;
    }
    if (poll(fds, 2, static_cast<int>(std::min<long long>(left, 1000))) < 0) break;
    for (auto& fd : fds) {
      if (fd.fd < 0 || fd.revents == 0) continue;
      char buffer[4096];
      ssize_t n = read(fd.fd, buffer, sizeof buffer);
      if (n <= 0) {
        close(fd.fd);
        fd.fd = -1;
        --open_fds;
      } else {
        (fd.fd == out_pipe[0] ? result.out : result.err).append(buffer, static_cast<size_t>(n));
      }
    }
  }
  for (auto& fd : fds) {
    if (fd.fd >= 0) close(fd.fd);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

std::string required_env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) {
    ADD_FAILURE() << name << " is not set (run through ctest)";
    return "/nonexistent";
  }
  return value;
}

bool processes_left(const std::string& marker, int wait_ms) {
  auto deadline = Clock::now() + std::chrono::milliseconds(wait_ms);
  for (;;) {
    // "[x]yz" matches the marker but not pgrep's own shell command line.
    std::string command = "pgrep -f -- '[" + marker.substr(0, 1) + "]" + marker.substr(1) + "' > /dev/null";
    if (std::system(command.c_str()) != 0) return false;
    if (Clock::now() > deadline) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::string field(const std::string& line, const std::string& key) {
  std::istringstream words(line);
  std::string word;
  while (words >> word) {
    if (word.compare(0, key.size() + 1, key + "=") == 0) return word.substr(key.size() + 1);
  }
  return "";
}

std::vector<std::string> lines_starting(const std::string& text, const std::string& prefix) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  std::string line;
  while (std::getline(stream, line)) {
    if (line.compare(0, prefix.size(), prefix) == 0) lines.push_back(line);
  }
  return lines;
}

}  // namespace faults
