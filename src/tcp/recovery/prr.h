// Proportional Rate Reduction (RFC 6937) as Linux's tcp_cwnd_reduction():
// during CWR and fast recovery, cwnd follows what is delivered so that the
// flight shrinks smoothly to ssthresh, with the Slow Start Reduction Bound
// (SSRB) once the flight has fallen below ssthresh.
#pragma once

#include <cstdint>

namespace weir::tcp::recovery {

class Prr {
 public:
  // RFC 6937 §3 "on entering recovery" / Linux tcp_init_cwnd_reduction():
  // RecoverFS is Linux's prior_cwnd (cwnd when the reduction started).
  void start(uint32_t prior_cwnd) {
    recover_fs_ = prior_cwnd;
    prr_delivered_ = 0;
    prr_out_ = 0;
  }
  // RFC 6937 §3 "on sending": packets (re)transmitted during the reduction.
  void on_sent(uint32_t packets) { prr_out_ += packets; }

  // RFC 6937 §3 "on every ACK", Linux flavour: returns the new cwnd
  // (in-flight + sndcnt), or `cwnd` unchanged when nothing was delivered.
  //  - pipe > ssthresh: sndcnt = ceil(prr_delivered * ssthresh / RecoverFS) - prr_out
  //  - otherwise (SSRB): sndcnt = min(ssthresh - pipe,
  //        max(prr_delivered - prr_out, DeliveredData) + 1 if snd.una advanced
  //        and nothing was newly marked lost)
  //  - at least one packet when nothing was sent yet: the fast retransmit.
  uint32_t cwnd_reduction(uint32_t cwnd, uint32_t ssthresh, uint32_t in_flight,
                          uint32_t newly_acked_sacked, uint32_t newly_lost,
                          bool snd_una_advanced);

  uint32_t prr_delivered() const { return prr_delivered_; }
  uint32_t prr_out() const { return prr_out_; }
  uint32_t recover_fs() const { return recover_fs_; }

 private:
  uint32_t recover_fs_ = 0;
  uint32_t prr_delivered_ = 0;
  uint32_t prr_out_ = 0;
};

}  // namespace weir::tcp::recovery
