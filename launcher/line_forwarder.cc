#include "line_forwarder.h"

#include <unistd.h>

#include <cerrno>

namespace rccrun {
namespace {

// A line longer than this is forwarded in pieces rather than buffered without bound.
constexpr size_t kMaxLineBytes = 64 * 1024;

void write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // our own output is gone (closed pipe): drop, keep supervising
    done += static_cast<size_t>(n);
  }
}

}  // namespace

LineForwarder::LineForwarder(int pipe_fd, int out_fd, int rank)
    : pipe_fd_(pipe_fd), out_fd_(out_fd), prefix_("[" + std::to_string(rank) + "] ") {}

LineForwarder::LineForwarder(LineForwarder&& other) noexcept
    : pipe_fd_(other.pipe_fd_),
      out_fd_(other.out_fd_),
      prefix_(std::move(other.prefix_)),
      partial_(std::move(other.partial_)) {
  other.pipe_fd_ = -1;
}

LineForwarder::~LineForwarder() {
  if (pipe_fd_ >= 0) close(pipe_fd_);
}

void LineForwarder::emit(const std::string& line) { write_all(out_fd_, prefix_ + line + "\n"); }

void LineForwarder::pump() {
  while (pipe_fd_ >= 0) {
    char buffer[65536];
    ssize_t n = read(pipe_fd_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {
      if (!partial_.empty()) emit(partial_);
      partial_.clear();
      close(pipe_fd_);
      pipe_fd_ = -1;
      return;
    }
    partial_.append(buffer, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t newline; (newline = partial_.find('\n', start)) != std::string::npos; start = newline + 1) {
      emit(partial_.substr(start, newline - start));
    }
    partial_.erase(0, start);
    if (partial_.size() > kMaxLineBytes) {
      emit(partial_);
      partial_.clear();
    }
  }
}

}  // namespace rccrun
