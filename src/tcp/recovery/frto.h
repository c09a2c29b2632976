// F-RTO, SACK-enhanced (RFC 5682 §3), as Linux's tcp_process_loss(): after
// an RTO, decide from the next ACKs whether the timeout was spurious.
#pragma once

#include <cstdint>

#include "weir/seq.h"

namespace weir::tcp::recovery {

struct FrtoAck {
  bool orig_data_delivered = false;  // a never-retransmitted packet below high_seq (s)acked (FLAG_ORIG_SACK_ACKED)
  bool data_sacked = false;          // FLAG_DATA_SACKED
  uint32_t num_dupack = 0;
  bool snd_una_advanced = false;
  bool recovered = false;            // snd.una reached high_seq
  Seq32 snd_nxt;
  Seq32 high_seq;
  bool can_send_new_data = false;    // unsent data and receive window room
};

enum class FrtoAction : uint8_t {
  kNone,             // keep going with conventional loss recovery
  kSpuriousUndo,     // step 3.b: the RTO was spurious: undo (TcpExtTCPSpuriousRTOs)
  kSendNewData,      // step 2.b: send new data instead of retransmitting
};

class Frto {
 public:
  // Linux tcp_enter_loss(): F-RTO for a new episode, or for repeated
  // timeouts on the same snd.una (RFC 5682 §3.2), not while probing MTU.
  void on_rto(int sysctl_frto, bool new_recovery, uint32_t retransmits, bool mtu_probing) {
    active_ = sysctl_frto != 0 && (new_recovery || retransmits > 0) && !mtu_probing;
  }
  bool active() const { return active_; }
  void stop() { active_ = false; }

  // RFC 5682 §3.1 steps 2 and 3 for one ACK in Loss. May move `high_seq`
  // to snd.nxt (step 2.b: new data sent after the RTO marks the new point).
  FrtoAction on_ack(const FrtoAck& a, Seq32& high_seq);

 private:
  bool active_ = false;
};

}  // namespace weir::tcp::recovery
