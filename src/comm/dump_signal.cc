#include "comm/dump_signal.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "base/call_report.h"
#include "base/cpu.h"
#include "base/log.h"
#include "base/settings.h"
#include "comm/call_dump.h"
#include "comm/comm.h"

namespace rcc {
namespace {

std::atomic<int> g_write_fd{-1};  // the pipe the handler writes to; -1 when no dumper runs

constexpr char kDump = 'd';
constexpr char kStop = 's';

void on_signal(int) {
  const int saved = errno;
  const int fd = g_write_fd.load(std::memory_order_acquire);
  if (fd >= 0) {
    const char byte = kDump;
    ssize_t ignored = ::write(fd, &byte, 1);  // a full pipe already holds a request
    (void)ignored;
  }
  errno = saved;
}

}  // namespace

Status DumpOnSignal::start(JobConnections& job, std::unique_ptr<DumpOnSignal>* out) {
  std::string enabled;
  RCC_RETURN_IF_ERROR(settings::choice("RCC_DEBUG_DUMP_SIGNAL", &enabled));
  if (enabled != "1" || g_write_fd.load() >= 0) return RCC_SUCCESS;
  std::unique_ptr<DumpOnSignal> dumper(new DumpOnSignal);
  if (::pipe2(dumper->pipe_, O_CLOEXEC | O_NONBLOCK) != 0) {
    return fail(RCC_ERR_INTERNAL, "RCC_DEBUG_DUMP_SIGNAL: pipe: %s", std::strerror(errno));
  }
  // The reading end blocks: the thread sleeps in read() until a request or the stop byte.
  const int flags = ::fcntl(dumper->pipe_[0], F_GETFL);
  ::fcntl(dumper->pipe_[0], F_SETFL, flags & ~O_NONBLOCK);
  JobConnections* target = &job;
  DumpOnSignal* self = dumper.get();
  dumper->thread_ = std::thread([self, target] { self->serve(*target); });
  int expected = -1;
  g_write_fd.compare_exchange_strong(expected, dumper->pipe_[1]);
  // Installed once and kept: after the job it ignores the signal, so a late SIGUSR1 from rccrun
  // never meets the default action (which ends the process).
  static const bool installed = [] {
    struct sigaction action {};
    action.sa_handler = on_signal;
    action.sa_flags = SA_RESTART;  // the application's system calls carry on
    sigemptyset(&action.sa_mask);
    return ::sigaction(SIGUSR1, &action, nullptr) == 0;
  }();
  if (!installed) RCC_WARN("RCC_DEBUG_DUMP_SIGNAL: cannot install the SIGUSR1 handler: %s", std::strerror(errno));
  // rccrun signals only ranks that say they have the handler (before it, SIGUSR1 would end them).
  const std::string dir = settings::text("RCC_DEBUG_DUMP_DIR");
  if (installed && !dir.empty()) {
    dumper->ready_file_ = report::ready_file(dir, job.rank);
    const int fd = ::open(dumper->ready_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) ::close(fd);
  }
  *out = std::move(dumper);
  return RCC_SUCCESS;
}

void DumpOnSignal::serve(JobConnections& job) {
  name_this_thread("rcc-dump");
  char byte = 0;
  for (;;) {
    const ssize_t n = ::read(pipe_[0], &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || byte == kStop) return;
    dump_calls_when_asked(job);
  }
}

DumpOnSignal::~DumpOnSignal() {
  if (!ready_file_.empty()) ::unlink(ready_file_.c_str());
  g_write_fd.store(-1, std::memory_order_release);
  const char byte = kStop;
  ssize_t ignored = ::write(pipe_[1], &byte, 1);
  (void)ignored;
  if (thread_.joinable()) thread_.join();
  ::close(pipe_[0]);
  ::close(pipe_[1]);
}

}  // namespace rcc
