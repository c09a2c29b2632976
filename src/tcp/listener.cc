#include "tcp/listener.h"

#include <algorithm>

namespace weir::tcp {

void Listener::on_established(uint32_t id) {
  auto it = std::find(syn_queue_.begin(), syn_queue_.end(), id);
  if (it != syn_queue_.end()) syn_queue_.erase(it);
  // A Fast Open child entered the accept queue at its SYN; its handshake
  // completing later must not queue it twice.
  if (std::find(accept_queue_.begin(), accept_queue_.end(), id) == accept_queue_.end())
    accept_queue_.push_back(id);
}

void Listener::forget(uint32_t id) {
  auto it = std::find(syn_queue_.begin(), syn_queue_.end(), id);
  if (it != syn_queue_.end()) syn_queue_.erase(it);
  auto jt = std::find(accept_queue_.begin(), accept_queue_.end(), id);
  if (jt != accept_queue_.end()) accept_queue_.erase(jt);
}

bool Listener::pop_accept(uint32_t& id) {
  if (accept_queue_.empty()) return false;
  id = accept_queue_.front();
  accept_queue_.pop_front();
  return true;
}

}  // namespace weir::tcp
