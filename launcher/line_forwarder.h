// --tag-output: reads a rank's stdout or stderr pipe and writes whole lines, each prefixed with
// "[rank] ", to rccrun's own stdout or stderr (one write per line, so ranks never interleave).
#pragma once

#include <string>

namespace rccrun {

class LineForwarder {
 public:
  LineForwarder(int pipe_fd, int out_fd, int rank);
  LineForwarder(LineForwarder&& other) noexcept;
  LineForwarder& operator=(LineForwarder&&) = delete;
  ~LineForwarder();
  int fd() const { return pipe_fd_; }
  bool open() const { return pipe_fd_ >= 0; }
  // Reads what is available; at end of file flushes a last partial line and closes the pipe.
  void pump();

 private:
  void emit(const std::string& line);
  int pipe_fd_;
  int out_fd_;
  std::string prefix_;
  std::string partial_;
};

}  // namespace rccrun
