#include "bootstrap/refusals.h"

#include "base/log.h"

namespace rcc::bootstrap {

RefusalLog::~RefusalLog() {
  std::lock_guard<std::mutex> guard(mutex_);
  if (unlogged_ > 0) {
    RCC_WARN("%s: %llu more refused connection(s) were not logged (%llu refused in all)", listener_.c_str(),
             static_cast<unsigned long long>(unlogged_), static_cast<unsigned long long>(total_));
  }
}

void RefusalLog::refused(const std::string& peer, const std::string& why) {
  std::lock_guard<std::mutex> guard(mutex_);
  ++total_;
  const auto now = Clock::now();
  if (total_ == 1 || now - window_start_ >= kWindow) {
    if (unlogged_ > 0) {
      RCC_WARN("%s: %llu more refused connection(s) were not logged (%llu refused so far)", listener_.c_str(),
               static_cast<unsigned long long>(unlogged_), static_cast<unsigned long long>(total_ - 1));
    }
    window_start_ = now;
    logged_in_window_ = 0;
    unlogged_ = 0;
  }
  if (logged_in_window_ < kBurst) {
    ++logged_in_window_;
    RCC_WARN("%s: refused a connection from %s: %s%s", listener_.c_str(), peer.c_str(), why.c_str(),
             logged_in_window_ == kBurst ? " (more refusals in the next 10 s are counted, not logged)" : "");
    return;
  }
  ++unlogged_;
}

uint64_t RefusalLog::total() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return total_;
}

}  // namespace rcc::bootstrap
