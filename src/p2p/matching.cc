#include "p2p/matching.h"

#include <algorithm>

namespace rcc::p2p {
namespace {

// The first receive in `list` that matches; list.end() if none.
std::deque<Request*>::iterator first_match(std::deque<Request*>& list, int tag, uint32_t context) {
  for (auto it = list.begin(); it != list.end(); ++it) {
    if ((*it)->context == context && tag_matches((*it)->tag, tag)) return it;
  }
  return list.end();
}

// Removes a matched entry. The oldest is the usual match, and a pop costs less than an erase.
template <typename T>
void take(std::deque<T>& list, typename std::deque<T>::iterator it) {
  if (it == list.begin()) {
    list.pop_front();
  } else {
    list.erase(it);
  }
}

}  // namespace

void Matcher::post(Request* receive) {
  receive->posted = next_posted_++;
  list_for(receive->peer)->push_back(receive);
}

Request* Matcher::take_receive(int source, int tag, uint32_t context) {
  std::deque<Request*>& own = posted_[static_cast<size_t>(source)];
  auto specific = first_match(own, tag, context);
  auto wildcard = any_source_.empty() ? any_source_.end() : first_match(any_source_, tag, context);
  const bool use_wildcard =
      wildcard != any_source_.end() && (specific == own.end() || (*wildcard)->posted < (*specific)->posted);
  if (use_wildcard) {
    Request* receive = *wildcard;
    take(any_source_, wildcard);
    return receive;
  }
  if (specific == own.end()) return nullptr;
  Request* receive = *specific;
  take(own, specific);
  return receive;
}

void Matcher::park(Arrival arrival) {
  arrival.order = next_arrival_++;
  arrived_[static_cast<size_t>(arrival.source)].push_back(std::move(arrival));
}

Matcher::Found Matcher::locate(int source, int tag, uint32_t context) {
  Found best;
  const size_t first = source == kAnySource ? 0 : static_cast<size_t>(source);
  const size_t last = source == kAnySource ? arrived_.size() : first + 1;
  for (size_t s = first; s < last; ++s) {
    std::deque<Arrival>& list = arrived_[s];
    for (auto it = list.begin(); it != list.end(); ++it) {
      if (it->header.context != context || !tag_matches(tag, it->header.tag)) continue;
      if (best.list == nullptr || it->order < best.at->order) best = Found{&list, it};
      break;  // later ones from this source arrived later
    }
  }
  return best;
}

bool Matcher::take_arrival(int source, int tag, uint32_t context, Arrival* out) {
  Found found = locate(source, tag, context);
  if (found.list == nullptr) return false;
  *out = std::move(*found.at);
  take(*found.list, found.at);
  return true;
}

const Arrival* Matcher::peek_arrival(int source, int tag, uint32_t context) {
  Found found = locate(source, tag, context);
  return found.list == nullptr ? nullptr : &*found.at;
}

void Matcher::unpost(Request* receive) {
  std::deque<Request*>& list = *list_for(receive->peer);
  auto it = std::find(list.begin(), list.end(), receive);
  if (it != list.end()) list.erase(it);
}

}  // namespace rcc::p2p
