// The transmit hash's random and flow-hash sources (tcp/flow_label.h).
#include "tcp/flow_label.h"

#include "tcp/isn.h"
#include "util/splitmix.h"

namespace weir::tcp {

// A word of tuple_hash's input of its own, so the flow hash is unrelated
// to the ISN and timestamp offsets keyed by the same secret.
constexpr uint64_t kFlowHashStream = 0x464c4f5748u;  // "FLOWH"

uint32_t flow_hash(uint64_t secret, const FourTuple& t) {
  const auto h = static_cast<uint32_t>(tuple_hash(secret, t, kFlowHashStream));
  return h ? h : 1;  // Linux flow_hash_from_keys: "if (!hash) hash = 1"
}

// splitmix64 (one step), the generator fastopen::random_key also uses;
// the high half of its output.
uint32_t next_txhash(uint64_t& state) {
  const auto v = static_cast<uint32_t>(splitmix64(state) >> 32);
  return v ? v : 1;  // Linux net_tx_rndhash: "return v ?: 1"
}

}  // namespace weir::tcp
