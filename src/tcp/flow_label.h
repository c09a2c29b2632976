// IPv6 flow labels (RFC 6437) from a socket's transmit hash, as Linux
// makes them: every TCP socket holds a random non-zero 32-bit hash
// (sk_txhash, drawn by net_tx_rndhash at connect() and for each request),
// and ip6_make_flowlabel turns it into the 20-bit label of every packet the
// socket sends. When the path looks broken (a retransmission timeout, or
// the peer's duplicate data arriving under a new label) the socket draws a
// new hash (sk_rethink_txhash), so the label, and with it the ECMP path of
// routers that hash on it (RFC 6438), changes.
//
// The functions are inline: the label is computed per segment, as ip6_xmit
// does, so a sysctl or socket option applies from the next packet on.
#pragma once

#include <bit>
#include <cstdint>

#include "weir/addr.h"
#include "weir/config.h"

namespace weir::tcp {

inline constexpr uint32_t kFlowLabelMask = 0xfffff;             // IPV6_FLOWLABEL_MASK (RFC 8200 §3)
inline constexpr uint32_t kFlowLabelStatelessFlag = 0x80000;    // IPV6_FLOWLABEL_STATELESS_FLAG

// net.ipv6.auto_flowlabels (Linux IP6_AUTO_FLOW_LABEL_*): 1, opt-out, is
// the default (IP6_DEFAULT_AUTO_FLOW_LABELS).
inline constexpr int kAutoFlowLabelOff = 0;
inline constexpr int kAutoFlowLabelOptOut = 1;
inline constexpr int kAutoFlowLabelOptIn = 2;
inline constexpr int kAutoFlowLabelForced = 3;

// Linux ip6_default_np_autolabel: what a socket that never set
// IPV6_AUTOFLOWLABEL gets (off, opt-in: no; opt-out, forced: yes). The
// control socket that answers for TIME-WAIT and sends resets never sets it.
inline bool default_autolabel(const StackConfig& cfg) {
  return cfg.auto_flowlabels == kAutoFlowLabelOptOut || cfg.auto_flowlabels == kAutoFlowLabelForced;
}

// Linux ip6_autoflowlabel: the socket's IPV6_AUTOFLOWLABEL (`sock_opt`, -1
// when never set: AUTOFLOWLABEL_SET clear), else the default.
inline bool sock_autolabel(const StackConfig& cfg, int8_t sock_opt) {
  return sock_opt < 0 ? default_autolabel(cfg) : sock_opt != 0;
}

// Linux ip6_make_flowlabel for a socket without an explicit label
// (np->flow_label 0, which weir never sets): none when auto labels are off,
// or not wanted and not forced; else the hash rotated by 16 ("obfuscate
// hash a bit ... Only lower 20 bits are relevant"), its low 20 bits, with
// the stateless flag under net.ipv6.flowlabel_state_ranges (RFC 6437 §2
// leaves the range's use to the host). A hash whose rotated low 20 bits are
// zero gives label 0; Linux sends that as it is.
inline uint32_t make_flow_label(const StackConfig& cfg, uint32_t hash, bool autolabel) {
  if (cfg.auto_flowlabels == kAutoFlowLabelOff || (!autolabel && cfg.auto_flowlabels != kAutoFlowLabelForced))
    return 0;
  uint32_t label = std::rotl(hash, 16) & kFlowLabelMask;
  if (cfg.flowlabel_state_ranges) label |= kFlowLabelStatelessFlag;
  return label;
}

// Linux skb_get_hash_flowi6 for a packet that carries no socket hash (a
// reset with no socket behind it): the flow's own hash (flow_hash_from_keys,
// never 0), keyed here by the stack's secret where Linux seeds it at boot.
uint32_t flow_hash(uint64_t secret, const FourTuple& t);

// Linux net_tx_rndhash: a random u32, 1 in place of 0 (0 means "no hash").
// `state` is a splitmix64 generator's, seeded by txhash_seed from the
// driver's secret (TcpEnv::tx_rndhash), so runs repeat.
uint32_t next_txhash(uint64_t& state);
inline uint64_t txhash_seed(uint64_t secret) { return secret ^ 0x5458484153480000ull; }  // "TXHASH": its own stream

}  // namespace weir::tcp
