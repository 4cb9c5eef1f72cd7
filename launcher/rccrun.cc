// rccrun: hosts the rendezvous store, starts the ranks (locally or through --rsh), forwards their
// output and signals, and stops the whole job as soon as one rank fails.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>
#include <thread>

#include "bootstrap/job.h"
#include "bootstrap/store.h"
#include "dump_collector.h"
#include "line_forwarder.h"
#include "options.h"
#include "rank_setup.h"
#include "say.h"

namespace rccrun {
namespace {

using Clock = std::chrono::steady_clock;

// Ranks get this long to exit after SIGTERM before SIGKILL.
constexpr auto kKillGrace = std::chrono::seconds(3);
// Deaths this close to the first one are compared to find the cause (see report_failure).
constexpr auto kFailureSettle = std::chrono::milliseconds(500);

const char* const kRankVariables[] = {"RCC_RANK",       "RCC_SIZE",       "RCC_LOCAL_RANK",
                                      "RCC_LOCAL_SIZE", "RCC_STORE_ADDR", "RCC_JOB_SECRET"};

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (auto& s : strings) result.push_back(s.data());
  result.push_back(nullptr);
  return result;
}

class Job {
 public:
  Job(Options options, std::vector<Placement> placement)
      : options_(std::move(options)), placement_(std::move(placement)) {}

  int run() {
    sigset_t handled;
    sigemptyset(&handled);
    for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1}) sigaddset(&handled, sig);
    // Blocked before the store's thread starts, so only signalfd sees them.
    pthread_sigmask(SIG_BLOCK, &handled, &original_mask_);
    signal(SIGPIPE, SIG_IGN);
    signal_fd_ = signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK);
    if (signal_fd_ < 0) {
      say("signalfd: %s", std::strerror(errno));
      return 1;
    }
    if (!start_store()) return 1;
    if (!dumps_.prepare(&options_)) return 1;
    if (!prepare_ranks(options_, placement_, store_->address(), secret_, &ranks_)) return 1;
    if (options_.display_map) display_map();
    for (Rank& rank : ranks_) {
      if (!spawn(rank)) {
        begin_stop(1, SIGTERM);
        break;
      }
    }
    supervise();
    if (exit_status_ != 0) dumps_.report();
    return exit_status_;
  }

 private:
  bool start_store() {
    bool all_local = true;
    for (const Placement& p : placement_) all_local = all_local && is_local_host(p.host);
    std::string secret;
    if (rcc::bootstrap::make_secret(&secret) != RCC_SUCCESS) {
      say("cannot make the job secret: %s", rcc::last_error().c_str());
      return false;
    }
    std::string advertise = all_local ? "127.0.0.1" : rcc::bootstrap::advertised_host();
    if (rcc::bootstrap::StoreServer::start(all_local ? "127.0.0.1" : "0.0.0.0", 0, advertise, secret, &store_) !=
        RCC_SUCCESS) {
      say("cannot start the rendezvous store: %s", rcc::last_error().c_str());
      return false;
    }
    secret_ = secret;
    return true;
  }

  void display_map() {
    for (const Rank& rank : ranks_) {
      say("rank %d on %s (local rank %d of %d, %s)", rank.rank, rank.placement.host.c_str(), rank.placement.local_rank,
          rank.placement.local_size, rank.local ? "started directly" : "started through --rsh");
    }
  }

  bool spawn(Rank& rank) {
    if (options_.tag_output && (pipe2(rank.stdout_pipe, O_CLOEXEC) != 0 || pipe2(rank.stderr_pipe, O_CLOEXEC) != 0)) {
      say("pipe: %s", std::strerror(errno));
      return false;
    }
    if (!rank.stdin_secret.empty() && pipe2(rank.stdin_pipe, O_CLOEXEC) != 0) {
      say("pipe: %s", std::strerror(errno));
      return false;
    }
    int null_fd = rank.rank == 0 || rank.stdin_pipe[0] >= 0 ? -1 : open("/dev/null", O_RDONLY | O_CLOEXEC);
    std::vector<char*> argv = pointers(rank.argv);
    std::vector<char*> envp = pointers(rank.env);
    pid_t pid = fork();
    if (pid < 0) {
      say("cannot start rank %d: fork: %s", rank.rank, std::strerror(errno));
      if (null_fd >= 0) close(null_fd);
      return false;
    }
    if (pid == 0) {
      // Child: own process group (so the whole tree can be signalled), default signals.
      setpgid(0, 0);
      struct sigaction default_action {};
      default_action.sa_handler = SIG_DFL;
      for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1}) {
        sigaction(sig, &default_action, nullptr);
      }
      sigprocmask(SIG_SETMASK, &original_mask_, nullptr);
      if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
      if (rank.stdin_pipe[0] >= 0) dup2(rank.stdin_pipe[0], STDIN_FILENO);
      if (rank.stdout_pipe[1] >= 0) dup2(rank.stdout_pipe[1], STDOUT_FILENO);
      if (rank.stderr_pipe[1] >= 0) dup2(rank.stderr_pipe[1], STDERR_FILENO);
      if (rank.cpus) sched_setaffinity(0, sizeof(cpu_set_t), &rank.cpus->native());
      execve(rank.path.c_str(), argv.data(), envp.data());
      const char message[] = "rccrun: exec failed\n";
      ssize_t ignored = write(STDERR_FILENO, message, sizeof message - 1);
      (void)ignored;
      _exit(127);
    }
    setpgid(pid, pid);  // also here, so signalling the group never races the child's own call
    if (null_fd >= 0) close(null_fd);
    if (rank.stdin_pipe[0] >= 0) pass_secret(rank);
    rank.pid = pid;
    rank.running = true;
    ++running_;
    if (options_.tag_output) {
      close(rank.stdout_pipe[1]);
      close(rank.stderr_pipe[1]);
      fcntl(rank.stdout_pipe[0], F_SETFL, O_NONBLOCK);
      fcntl(rank.stderr_pipe[0], F_SETFL, O_NONBLOCK);
      forwarders_.emplace_back(rank.stdout_pipe[0], STDOUT_FILENO, rank.rank);
      forwarders_.emplace_back(rank.stderr_pipe[0], STDERR_FILENO, rank.rank);
    }
    return true;
  }

  // A remote rank's stdin: the secret line (it fits the pipe's buffer), then, for rank 0, what
  // rccrun reads on its own stdin (as a local rank 0 would have it); for the others, end of file.
  static void pass_secret(Rank& rank) {
    close(rank.stdin_pipe[0]);
    const int out = rank.stdin_pipe[1];
    const std::string& line = rank.stdin_secret;
    ssize_t written = write(out, line.data(), line.size());
    if (written != static_cast<ssize_t>(line.size()) || rank.rank != 0) {
      close(out);
      return;
    }
    std::thread([out] {
      char buffer[65536];
      for (;;) {
        ssize_t n = read(STDIN_FILENO, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        ssize_t done = 0;
        while (done < n) {
          ssize_t m = write(out, buffer + done, static_cast<size_t>(n - done));
          if (m < 0 && errno == EINTR) continue;
          if (m <= 0) break;
          done += m;
        }
        if (done < n) break;  // the rank is gone (SIGPIPE is ignored here)
      }
      close(out);
    }).detach();
  }

  void signal_all(int sig) {
    for (const Rank& rank : ranks_) {
      if (rank.pid > 0) kill(-rank.pid, sig);  // the group: grandchildren too
    }
  }

  // First failure decides the exit status; everyone else is asked to stop, then killed.
  void begin_stop(int status, int sig) {
    if (!stopping_) {
      stopping_ = true;
      exit_status_ = status;
    }
    send_stop_signal(sig);
  }

  // A rank failed: the others learn of it through rcc and should exit by themselves; only those
  // still running after the grace period get SIGTERM (then SIGKILL).
  void begin_failure_grace() {
    if (stopping_) return;
    stopping_ = true;
    exit_status_ = 1;  // replaced by the failing rank's status in report_failure
    // Not before the cause is named: ranks killed by our SIGTERM must not look like the cause.
    const auto grace = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(std::max(0.0, options_.failure_grace_s)));
    terminate_at_ = Clock::now() + std::max<Clock::duration>(grace, kFailureSettle);
    // After a timeout, the ranks still running say where they are, for the table printed at the end.
    if (dumps_.timed_out()) dumps_.request_missing(ranks_);
  }

  void send_stop_signal(int sig) {
    if (stop_signal_sent_) return;
    stop_signal_sent_ = true;
    terminate_at_.reset();
    signal_all(sig);
    kill_at_ = Clock::now() + kKillGrace;
  }

  void reap() {
    for (;;) {
      int status = 0;
      pid_t pid = waitpid(-1, &status, WNOHANG);
      if (pid <= 0) return;
      for (Rank& rank : ranks_) {
        if (rank.pid != pid || !rank.running) continue;
        rank.running = false;
        --running_;
        bool failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
        // Failures before any stop signal are candidates for "the first rank that died".
        if (failed && (!stopping_ || report_at_) && !stop_signal_sent_) {
          failures_.push_back({&rank - ranks_.data(), pid, status});
          if (!report_at_) {
            report_at_ = Clock::now() + kFailureSettle;
            begin_failure_grace();
          }
        }
      }
    }
  }

  // Names the rank whose failure stopped the job. A killed rank's survivors can notice its death
  // (its sockets close) and exit before the kernel has made it a zombie, so the deaths seen within
  // kFailureSettle are compared: a rank killed by a signal is the cause rather than ranks that
  // exited with an error at the same time.
  // "ranks 2 (host b), 3 (host b)": the ranks not yet exited, for messages naming them.
  std::string still_running() const {
    std::string list;
    int count = 0;
    for (const Rank& rank : ranks_) {
      if (!rank.running) continue;
      list += (count++ == 0 ? "" : ", ") + std::to_string(rank.rank) + " (host " + rank.placement.host + ")";
    }
    return (count == 1 ? "rank " : "ranks ") + list;
  }

  void report_failure() {
    report_at_.reset();
    if (failures_.empty()) return;
    const Failure* cause = &failures_.front();
    for (const Failure& f : failures_) {
      if (WIFSIGNALED(f.status)) {
        cause = &f;
        break;
      }
    }
    const Rank& rank = ranks_[static_cast<size_t>(cause->rank_index)];
    if (WIFSIGNALED(cause->status)) {
      say("rank %d (host %s, pid %d) was killed by signal %s", rank.rank, rank.placement.host.c_str(), cause->pid,
          signal_text(WTERMSIG(cause->status)).c_str());
      exit_status_ = 128 + WTERMSIG(cause->status);
    } else {
      say("rank %d (host %s, pid %d) exited with status %d", rank.rank, rank.placement.host.c_str(), cause->pid,
          WEXITSTATUS(cause->status));
      exit_status_ = WEXITSTATUS(cause->status);
    }
    if (running_ > 0 && !stop_signal_sent_ && options_.failure_grace_s > 0) {
      say("giving the other %d rank%s %g s to exit (--failure-grace), then SIGTERM", running_, running_ == 1 ? "" : "s",
          options_.failure_grace_s);
    } else if (running_ > 0) {
      say("stopping the other %d rank%s", running_, running_ == 1 ? "" : "s");
    }
  }

  void on_signals() {
    signalfd_siginfo info;
    while (read(signal_fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
      int sig = static_cast<int>(info.ssi_signo);
      if (sig == SIGCHLD) continue;  // reaped below
      if (sig == SIGUSR1) {          // where is everyone? (the job goes on)
        dumps_.request_fresh(ranks_);
        continue;
      }
      if (!stop_signal_sent_) {
        say("received signal %s; forwarding it to %d rank%s", signal_text(sig).c_str(), running_,
            running_ == 1 ? "" : "s");
        begin_stop(128 + sig, sig);
      } else {
        say("received signal %s again; killing every rank", signal_text(sig).c_str());
        signal_all(SIGKILL);
      }
    }
    reap();
  }

  void supervise() {
    std::optional<Clock::time_point> job_deadline;
    if (options_.timeout_s > 0) {
      job_deadline =
          Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options_.timeout_s));
    }
    reap();
    while (running_ > 0) {
      std::vector<pollfd> fds{{signal_fd_, POLLIN, 0}};
      std::vector<LineForwarder*> owners{nullptr};
      for (LineForwarder& f : forwarders_) {
        if (!f.open()) continue;
        fds.push_back({f.fd(), POLLIN, 0});
        owners.push_back(&f);
      }
      std::optional<Clock::time_point> wake;
      if (job_deadline && !stopping_) wake = job_deadline;
      if (kill_at_) wake = wake ? std::min(*wake, *kill_at_) : *kill_at_;
      if (terminate_at_) wake = wake ? std::min(*wake, *terminate_at_) : *terminate_at_;
      if (report_at_) wake = wake ? std::min(*wake, *report_at_) : *report_at_;
      if (auto dump_wake = dumps_.wake()) wake = wake ? std::min(*wake, *dump_wake) : *dump_wake;
      int timeout_ms = -1;
      if (wake) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*wake - Clock::now()).count();
        timeout_ms = left < 0 ? 0 : static_cast<int>(std::min<long long>(left + 1, 1 << 30));
      }
      int ready = poll(fds.data(), fds.size(), timeout_ms);
      if (ready < 0 && errno != EINTR) {
        say("poll: %s", std::strerror(errno));
        begin_stop(1, SIGKILL);
      }
      for (size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents != 0) owners[i]->pump();
      }
      if (fds[0].revents != 0) on_signals();
      auto now = Clock::now();
      if (job_deadline && !stopping_ && now >= *job_deadline) {
        say("the job exceeded --timeout %g s; stopping %d rank%s", options_.timeout_s, running_,
            running_ == 1 ? "" : "s");
        begin_stop(124, SIGTERM);
      }
      if (report_at_ && now >= *report_at_) report_failure();
      dumps_.poll();
      if (terminate_at_ && now >= *terminate_at_) {
        say("%s still running %g s after the failure (stuck, stopped or unreachable); sending SIGTERM",
            still_running().c_str(), options_.failure_grace_s);
        send_stop_signal(SIGTERM);
      }
      if (kill_at_ && now >= *kill_at_) {
        if (running_ > 0)
          say("%s still running %lld s after SIGTERM; sending SIGKILL", still_running().c_str(),
              static_cast<long long>(kKillGrace.count()));
        signal_all(SIGKILL);
        kill_at_.reset();
      }
    }
    if (report_at_) report_failure();  // every rank ended within the settle time
    // Leftovers of a stopped job (a rank's children that outlived it) go too.
    if (stopping_) signal_all(SIGKILL);
    // Output the ranks wrote before exiting is still in the pipes.
    for (LineForwarder& f : forwarders_) f.pump();
  }

  Options options_;
  std::vector<Placement> placement_;
  std::unique_ptr<rcc::bootstrap::StoreServer> store_;
  std::string secret_;
  std::vector<Rank> ranks_;
  std::vector<LineForwarder> forwarders_;
  DumpCollector dumps_;
  sigset_t original_mask_{};
  int signal_fd_ = -1;
  int running_ = 0;
  bool stopping_ = false;          // the exit status is decided
  bool stop_signal_sent_ = false;  // SIGTERM (or a forwarded signal) went to every rank
  int exit_status_ = 0;
  struct Failure {
    ptrdiff_t rank_index;
    pid_t pid;
    int status;  // from waitpid
  };
  std::vector<Failure> failures_;                  // failed ranks seen before the cause is named
  std::optional<Clock::time_point> report_at_;     // when to name it
  std::optional<Clock::time_point> terminate_at_;  // end of the failure grace period
  std::optional<Clock::time_point> kill_at_;
};

}  // namespace
}  // namespace rccrun

int main(int argc, char** argv) {
  rccrun::Options options;
  std::string error;
  if (!rccrun::parse_command_line(argc, argv, &options, &error)) {
    std::fprintf(stderr, "rccrun: %s\n%s", error.c_str(), rccrun::usage());
    return 2;
  }
  if (options.help) {
    std::fputs(rccrun::usage(), stdout);
    return 0;
  }
  if (options.version) {
    std::printf("rccrun (rcc) %s\n", RCC_VERSION_STRING);
    return 0;
  }
  std::vector<rccrun::Placement> placement;
  if (!rccrun::place_ranks(options.ranks, options.hosts, &placement, &error)) {
    std::fprintf(stderr, "rccrun: %s\n", error.c_str());
    return 2;
  }
  rccrun::Job job(std::move(options), std::move(placement));
  return job.run();
}
