// A listening socket (RFC 9293 §3.10.7.2): its SYN queue (connections in
// SYN-RECEIVED it created) and accept queue (ESTABLISHED, not yet
// accepted), both bounded by the backlog as Linux bounds them, and the
// SYN-cookie state (RFC 4987 §3.6) used when the SYN queue is full.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <vector>

#include "weir/addr.h"
#include "weir/time.h"

namespace weir::tcp {

class Listener {
 public:
  Listener(const Endpoint& local, int backlog) : local_(local) { set_backlog(backlog); }

  const Endpoint& local() const { return local_; }
  // Linux: listen(2)'s backlog, capped by somaxconn; listen() again updates it.
  void set_backlog(int backlog) { backlog_ = static_cast<uint32_t>(backlog < 0 ? 0 : backlog); }
  uint32_t backlog() const { return backlog_; }

  // Linux inet_csk_reqsk_queue_is_full: the SYN queue holds `backlog` at most.
  bool syn_queue_full() const { return syn_queue_.size() >= std::max<uint32_t>(backlog_, 1); }
  // Linux sk_acceptq_is_full: more than `backlog` waiting to be accepted.
  bool accept_queue_full() const { return accept_queue_.size() > backlog_; }

  void add_embryonic(uint32_t id) { syn_queue_.push_back(id); }
  // A child completed its handshake: from the SYN queue to the accept queue.
  void on_established(uint32_t id);
  // A child went away before accept().
  void forget(uint32_t id);
  // The oldest child ready for accept(), if any.
  bool pop_accept(uint32_t& id);
  void push_accept(uint32_t id) { accept_queue_.push_back(id); }
  size_t accept_queue_len() const { return accept_queue_.size(); }
  bool in_accept_queue(uint32_t id) const {
    return std::find(accept_queue_.begin(), accept_queue_.end(), id) != accept_queue_.end();
  }
  size_t syn_queue_len() const { return syn_queue_.size(); }
  const std::vector<uint32_t>& syn_queue() const { return syn_queue_; }
  const std::deque<uint32_t>& accept_queue() const { return accept_queue_; }

  // RFC 7413 §5.1 / Linux fastopenq.qlen: Fast Open children count from
  // their SYN until they leave SYN-RECEIVED (reqsk_fastopen_remove: the
  // handshake completes or the child dies), whether accepted or not.
  void add_fastopen(uint32_t id) { fastopen_.push_back(id); }
  // Drops the children `pending` says have left SYN-RECEIVED (or are gone)
  // and returns how many slots remain taken, held resets included.
  template <class Pending>
  size_t fastopen_qlen(Pending pending) {
    std::erase_if(fastopen_, [&](uint32_t id) { return !pending(id); });
    return fastopen_.size() + fastopen_reset_.size();
  }
  // Linux reqsk_fastopen_remove(reset = true): a child reset in
  // SYN-RECEIVED keeps its slot until `until` (rskq_rst_head). Bounded by
  // `cap` (the TCP_FASTOPEN qlen): a slot only moves here from fastopen_.
  static constexpr Duration kFastOpenResetHold = Duration::s(60);
  void hold_fastopen_reset(uint32_t id, Time until, size_t cap) {
    std::erase(fastopen_, id);
    if (fastopen_reset_.size() >= cap) fastopen_reset_.pop_front();
    fastopen_reset_.push_back(until);
  }
  // Linux tcp_fastopen_queue_check at a full queue: frees the oldest held
  // slot if its time is up (not time_after(expires, jiffies)).
  bool reclaim_fastopen_reset(Time now) {
    if (fastopen_reset_.empty() || fastopen_reset_.front() > now) return false;
    fastopen_reset_.pop_front();
    return true;
  }

  // Linux tcp_synq_overflow / tcp_synq_no_recent_overflow: cookies are
  // accepted only within two minutes (MAX_SYNCOOKIE_AGE) of sending one.
  void note_cookie_sent(Time now) { last_cookie_ = now; cookies_sent_ = true; }
  bool cookies_recent(Time now) const {
    return cookies_sent_ && now - last_cookie_ <= Duration::s(120);
  }

 private:
  Endpoint local_;
  uint32_t backlog_ = 0;
  std::vector<uint32_t> syn_queue_;
  std::deque<uint32_t> accept_queue_;
  std::vector<uint32_t> fastopen_;  // ids, at most the listener's TCP_FASTOPEN qlen
  std::deque<Time> fastopen_reset_;  // hold ends, oldest first, same bound
  Time last_cookie_;
  bool cookies_sent_ = false;
};

}  // namespace weir::tcp
