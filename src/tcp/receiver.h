// The TCP receive side as one pure unit: RFC 9293's receive sequence
// variables (rcv.nxt, rcv.wnd, IRS), the receive queue the application reads,
// out-of-order reassembly, the advertised window (RFC 7323 scaling, never
// shrinking), receiver-side SWS avoidance, delayed ACKs, SACK/D-SACK blocks for
// outgoing ACKs, and receive-buffer autotuning.
//
// Fed by arguments only (`now`, the segment, the application's reads); it
// never holds a pointer back to the connection and never arms a timer: the
// connection asks `delack_deadline()` and arms its own.
//
// Where RFCs leave room this follows Linux (net/ipv4/tcp_input.c,
// tcp_output.c): tcp_select_initial_window, __tcp_select_window,
// tcp_grow_window, tcp_rcv_space_adjust, tcp_event_data_recv,
// __tcp_ack_snd_check, tcp_cleanup_rbuf, tcp_sack_new_ofo_skb, tcp_dsack_set.
//
// Deliberate differences from Linux (each also noted where it is coded):
//  - Memory is charged by payload bytes (plus a fixed 256 bytes per held
//    out-of-order range) instead of skb truesize; the window budget is the
//    tcp_adv_win_scale share of the buffer (Linux's default 50% ratio).
//  - Text past the advertised right edge is trimmed (RFC 9293 §3.10.7.4);
//    Linux keeps it when memory allows.
//  - The recorded rcv.wnd is always a whole number of scale units, so the
//    recorded right edge is exactly the one the peer computes, and it never
//    moves left, not even under memory pressure (Linux may announce a zero
//    window then; here in-order data over the buffer is dropped and counted
//    as TcpExtTCPRcvQDrop while the edge stays).
//  - SACK blocks are the held ranges ordered by their latest arrival; Linux
//    remembers only 4 and forgets older ones.
//  - A FIN in sequence is ACKed at once (what Linux does on the wire in
//    packetdrill's close/ and shutdown/ scripts).
//
// Calling protocol (what the connection does):
//   1. Before sending SYN or SYN-ACK: `select_initial_window(advmss, wscale_ok)`;
//      put `syn_window()` (never scaled, RFC 7323 §2.2) and, if offered,
//      `rcv_wscale()` in the SYN/SYN-ACK.
//   2. When the peer's SYN is processed (passive: on SYN; active: on SYN-ACK):
//      `on_syn(now, negotiated)` sets IRS and rcv.nxt = IRS + 1.
//   3. For every segment in a synchronized state that carries data or FIN and
//      passed the acceptability/PAWS checks: `on_data(now, seg, rto, counters)`.
//      Then send an ACK now if `outcome.ack_now`, else arm the delayed-ACK timer
//      at `delack_deadline()` if `ack_pending()`.
//   4. For every outgoing segment other than SYN/SYN-ACK: header window =
//      `select_window(counters)`; SACK option = `sack_blocks(out, max)`; after it
//      is sent with ACK set: `on_ack_sent(now)`. After sending data:
//      `on_data_sent(now)` (interactive/ping-pong detection).
//   5. Application reads: `read(now, out, peek, counters)`; if
//      `result.window_update` send a pure ACK (window update).
//   6. Delayed-ACK timer fired: `on_delack_timer(now, rto, counters)`; send an
//      ACK if it returns true.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "tcp/rcv_queue.h"
#include "tcp/reassembly.h"
#include "weir/config.h"
#include "weir/counters.h"
#include "weir/errors.h"
#include "weir/expected.h"
#include "weir/seq.h"
#include "weir/tcp_info.h"
#include "weir/time.h"

namespace weir::tcp {

// Receive-side configuration: the subset of StackConfig the receiver reads,
// plus net.core.rmem_max (which StackConfig does not carry).
struct ReceiverConfig {
  std::array<uint32_t, 3> tcp_rmem{4096, 131072, 6291456};  // net.ipv4.tcp_rmem
  uint32_t rmem_max = 212992;  // net.core.rmem_max: SO_RCVBUF's cap
  bool tcp_moderate_rcvbuf = true;
  int tcp_adv_win_scale = 1;   // share of the buffer kept for overhead
  bool tcp_dsack = true;
  Duration ato_min = Duration::ms(40);     // TCP_ATO_MIN
  Duration delack_min = Duration::ms(40);  // TCP_DELACK_MIN
  Duration delack_max = Duration::ms(200); // TCP_DELACK_MAX
  bool route_quickack = false;  // StackConfig::route_quickack (RTAX_QUICKACK)
  // StackConfig::fault_seed001_rcv_wnd_unclamped: the lab's contrast only.
  bool fault_seed001 = false;

  static ReceiverConfig from(const StackConfig& c);
};

// What the three-way handshake settled, handed over in on_syn().
struct RcvNegotiated {
  Seq32 irs;                 // RFC 9293 §3.3.1: initial receive sequence number
  bool wscale_ok = false;    // both SYNs carried WSopt (RFC 7323 §2.2)
  uint32_t advmss = 1460;    // MSS we announced
  uint32_t peer_mss = 536;   // MSS the peer announced (RFC 9293 §3.7.1 default 536)
  bool sack_ok = false;      // SACK-permitted both ways (RFC 2018 §2)
  bool timestamps = false;   // TSopt negotiated (RFC 7323 §3)
};

// The result of select_initial_window() (Linux's tcp_select_initial_window).
struct InitialWindow {
  uint32_t rcv_wnd = 0;       // bytes
  uint32_t window_clamp = 0;  // bytes
  uint8_t rcv_wscale = 0;     // the shift we offer (RFC 7323 §2.3)
  uint16_t syn_window = 0;    // header value for SYN/SYN-ACK: never scaled
};

// One arriving segment's receive-side content. `seq` is SEG.SEQ of the first
// payload byte (the SYN, if any, already consumed by the caller).
struct DataSegment {
  Seq32 seq;
  std::span<const uint8_t> payload;
  bool fin = false;
  bool ce = false;  // IP ECN CE mark: Linux enters quick-ACK mode (tcp_ecn_check_ce)
  // Age of the TSval this segment echoes (now - when we sent it), for the
  // receiver RTT estimate (Linux tcp_rcv_rtt_measure_ts). Absent without TS.
  std::optional<Duration> tsecr_age;
  // The raw TSecr the age was computed from, so that a TSecr repeated across a
  // burst is sampled once (Linux rcv_rtt_last_tsecr). 0: not given.
  uint32_t tsecr = 0;
  // A GRO/LRO aggregate of segments of this size (Linux
  // skb_shinfo(skb)->gso_size); 0: one segment as sent.
  uint32_t gso_size = 0;
};

// Why (part of) a segment was not accepted.
enum class RcvDrop : uint8_t {
  kNone = 0,
  kDuplicate,    // entirely below rcv.nxt, or already held out of order
  kOutOfWindow,  // starts at or beyond the advertised right edge
  kZeroWindow,   // in sequence but the window is zero (TcpExtTCPZeroWindowDrop)
  kNoMemory,     // receive buffer full (TcpExtTCPRcvQDrop / TcpExtTCPOFODrop)
  kAfterFin,     // data beyond a FIN already received
};
const char* to_string(RcvDrop d);

struct DataOutcome {
  uint32_t in_order = 0;        // bytes made readable now (incl. merged from the OFO queue)
  uint32_t ofo_queued = 0;      // bytes newly held out of order
  uint32_t duplicate = 0;       // bytes already received (reported by D-SACK)
  uint32_t trimmed = 0;         // bytes dropped beyond the window or the buffer
  bool out_of_order = false;    // the segment started beyond rcv.nxt
  bool filled_hole = false;     // it advanced rcv.nxt over held OFO data
  bool fin = false;             // the FIN is now in sequence (rcv.nxt covers it)
  bool ack_now = false;         // send an ACK immediately
  RcvDrop drop = RcvDrop::kNone;
};

struct ReadResult {
  size_t bytes = 0;            // copied to the reader
  size_t consumed = 0;         // taken off the queue: bytes, plus a skipped urgent byte
  bool window_update = false;  // send a window update now (Linux tcp_cleanup_rbuf)
};

// Linux tp->urg_data's states (TCP_URG_NOTYET, TCP_URG_VALID, TCP_URG_READ):
// no urgent pointer; one seen whose byte has not arrived; the byte held for
// recv(MSG_OOB); the byte read by recv(MSG_OOB), the mark still ahead.
enum class UrgData : uint8_t { kNone, kNotYet, kValid, kRead };

class Receiver {
 public:
  explicit Receiver(const ReceiverConfig& cfg);

  // ---- set-up -------------------------------------------------------------
  // Linux tcp_select_initial_window: rcv.wnd from the buffer quantized to
  // `advmss`, the shift from the largest buffer the connection may grow to,
  // and the clamp capped at 65535 << shift. Called before SYN / SYN-ACK.
  InitialWindow select_initial_window(uint32_t advmss, bool wscale_ok);
  // RFC 7323 §2.2: the SYN's window field is never scaled.
  uint16_t syn_window() const;
  // The peer's SYN: IRS known, options settled. If scaling was not agreed the
  // shift becomes 0 and every window is capped at 65535 (RFC 7323 §2.2).
  void on_syn(Time now, const RcvNegotiated& n);

  // ---- TCP_REPAIR (Linux tcp.c; tcp/tcp_repair.cc, rcv_repair.cc) --------
  // tcp_send_rcvq: `data` enters the readable queue at RCV.NXT, as if it had
  // arrived; ENOMEM when the buffer cannot hold it (tcp_try_rmem_schedule).
  Errc repair_queue_data(std::span<const uint8_t> data);
  // tcp_repair_options_est: the options the checkpointed connection had.
  void repair_options(Time now, bool wscale_ok, uint8_t rcv_wscale, bool sack_ok, bool timestamps);
  // tcp_repair_set_window: the receive half of struct tcp_repair_window.
  void repair_window(uint32_t rcv_wnd, Seq32 rcv_wup);
  Seq32 copied_seq() const { return copied_seq_; }

  // ---- socket options -------------------------------------------------------
  // SO_RCVBUF: doubled like Linux, capped by rmem_max, locks autotuning.
  Errc set_rcvbuf(uint32_t bytes);
  // TCP_WINDOW_CLAMP (0 only before the handshake, as Linux).
  Errc set_window_clamp(uint32_t bytes);
  // SO_RCVLOWAT: may grow the buffer and clamp the window (Linux tcp_set_rcvlowat).
  Errc set_rcvlowat(uint32_t bytes);
  // TCP_QUICKACK: on = leave ping-pong (interactive) mode; off = enter it.
  // Returns true when an ACK should be sent now (Linux __tcp_sock_set_quickack
  // runs tcp_cleanup_rbuf when an ACK is scheduled).
  bool set_quickack(bool on);
  // Linux tcp_enter_quickack_mode, for the connection's own reasons.
  void enter_quickack_mode();
  // Linux inet_csk_schedule_ack + tcp_enter_quickack_mode + a delayed-ACK
  // timer at `deadline`: an ACK is owed, to ride on data expected soon.
  // lrcvtime starts at `now` (tcp_finish_connect).
  void schedule_ack(Time now, Time deadline);

  // ---- arrivals -------------------------------------------------------------
  // RFC 9293 §3.10.7.4 acceptability test of SEG.SEQ/SEG.LEN (len counts FIN).
  bool acceptable(Seq32 seq, uint32_t seg_len) const;
  // Every segment carrying data or FIN in a synchronized state (after the
  // caller's RST/SYN/ACK checks). Runs the full acceptability test itself:
  // old or out-of-window segments come back with `drop` set and `ack_now`
  // (RFC 9293 §3.10.7.4: "send an acknowledgment"), a duplicate with a D-SACK
  // queued. `rto` bounds ATO; `srtt` (zero if unknown) bounds the delayed-ACK
  // timeout and the SACK-compression delay as in Linux.
  DataOutcome on_data(Time now, const DataSegment& seg, Duration rto, Counters& c);
  DataOutcome on_data(Time now, const DataSegment& seg, Duration rto, Duration srtt,
                      Counters& c);
  // Linux tcp_fastopen_add_skb: a Fast Open SYN's data (and FIN), in order
  // at RCV.NXT, queued as it is. Only the first segment, so it needs no
  // acceptability test.
  DataOutcome on_syn_data(std::span<const uint8_t> data, bool fin);
  // A data segment failed acceptable() and will be answered by a duplicate
  // ACK: Linux tcp_send_dupack's bookkeeping. If it carries old data, queue a
  // D-SACK for it (RFC 2883 §4), count TcpExtDelayedACKLost and enter
  // quick-ACK mode. Call before sending that ACK.
  void on_unacceptable(Seq32 seq, uint32_t seg_len, Counters& c);

  // ---- the application ------------------------------------------------------
  // recv(): Linux tcp_recvmsg, which stops at the urgent mark once it has
  // copied anything and, without SO_OOBINLINE, steps over the urgent byte
  // (rcv_urgent.cc). `consumed` > `bytes` when it skipped that byte.
  ReadResult read(Time now, std::span<uint8_t> out, bool peek, Counters& c);
  // splice(): Linux tcp_read_sock, which stops at the urgent mark and never
  // skips the byte (rcv_urgent.cc).
  ReadResult read_sock(Time now, std::span<uint8_t> out);

  // ---- urgent data (RFC 9293 §3.8.5, RFC 6093; rcv_urgent.cc) ---------------
  // A segment with URG: Linux tcp_check_urg. With `stdurg` false (Linux's
  // default tcp_stdurg = 0, RFC 6093 §4) the pointer points to the byte
  // after the urgent one, with true at it (RFC 1122 §4.2.2.4). `seq` is
  // SEG.SEQ (the SYN's number, if any), `up` SEG.UP.
  void check_urg(Seq32 seq, uint16_t up, bool stdurg);
  // Every segment: Linux tcp_urg takes the urgent byte when a segment holds
  // it, in order or not. `seq` is the first payload byte's number. True
  // when it did (readers are woken: sk_data_ready).
  bool take_urg_byte(Seq32 seq, std::span<const uint8_t> payload);
  // recv(MSG_OOB): Linux tcp_recv_urg's answer while the byte is held.
  // kInval: none (or SO_OOBINLINE, or already read); kAgain: not yet here.
  Expected<uint8_t, Errc> read_urg(bool peek);
  void set_oob_inline(bool on) { urg_inline_ = on; }  // SO_OOBINLINE (SOCK_URGINLINE)
  UrgData urg_data() const { return urg_data_; }
  Seq32 urg_seq() const { return urg_seq_; }
  bool at_mark() const { return urg_data_ != UrgData::kNone && urg_seq_ == copied_seq_; }  // SIOCATMARK
  // Linux tcp_poll: one byte more than SO_RCVLOWAT makes the socket
  // readable while the reader sits at an urgent byte it will skip.
  size_t poll_target(size_t lowat) const { return lowat + (at_mark() && !urg_inline_ ? 1 : 0); }
  // FIONREAD / SIOCINQ (Linux tcp_inq): bytes up to the urgent mark while
  // one lies in the readable data and SO_OOBINLINE is off, else readable().
  size_t inq() const;
  size_t readable() const { return rcvq_.size(); }
  bool fin_received() const { return fin_in_order_; }
  bool eof() const { return fin_in_order_ && rcvq_.empty(); }
  bool window_update_needed() const;  // tcp_cleanup_rbuf's test, without reading

  // ---- outgoing segments ----------------------------------------------------
  // Window field for a non-SYN segment: records rcv.wnd and the right edge
  // (rcv.nxt + rcv.wnd), which never moves left (RFC 9293 MUST-35).
  uint16_t select_window(Counters& c);
  // SACK blocks for the next segment, D-SACK first (RFC 2883 §4), then the
  // block with the latest arrival (RFC 2018 §4). Returns the count written.
  size_t sack_blocks(std::span<SeqRange> out, size_t max_blocks) const;
  // Whether sack_blocks could write any: a D-SACK or data held out of order
  // (inline: an in-order flow skips the call on every segment sent).
  bool has_sack_blocks() const { return dsack_ || !ofo_.empty() || ofo_fin_; }
  // How many sack_blocks would write with no limit (Linux eff_sacks:
  // rx_opt.num_sacks + rx_opt.dsack), without building them.
  size_t sack_block_count() const;
  // A segment with ACK was sent: clears the pending ACK and D-SACK, counts
  // down quick-ACK mode (Linux tcp_event_ack_sent).
  void on_ack_sent(Time now);
  // We sent data: interactive (ping-pong) detection (Linux tcp_event_data_sent).
  void on_data_sent(Time now);
  // (Both are defined inline below the class: they run for every segment
  // sent, and a call into another file cost more than their few stores.)

  // ---- delayed ACK ----------------------------------------------------------
  bool ack_pending() const { return ack_pending_; }
  // The earliest of the delayed-ACK timer and the SACK-compression timer;
  // Time::never() when neither is armed.
  Time delack_deadline() const;
  // Timer fired. Returns true when an ACK must be sent now.
  bool on_delack_timer(Time now, Duration rto, Counters& c);

  // ---- state ----------------------------------------------------------------
  Seq32 irs() const { return irs_; }
  Seq32 rcv_nxt() const { return rcv_nxt_; }           // RFC 9293 RCV.NXT
  uint32_t rcv_wnd() const { return rcv_wnd_; }        // last advertised (bytes)
  Seq32 right_edge() const { return rcv_wup_ + rcv_wnd_; }
  Seq32 rcv_wup() const { return rcv_wup_; }  // rcv.nxt at the last announcement (Last.ACK.sent)
  // Linux tcp_fastopen_create_child: the SYN-ACK about to go out announces
  // the window from the SYN's data onwards (rcv_wup = rcv_nxt).
  void announce_from_rcv_nxt() { rcv_wup_ = rcv_nxt_; }
  // What is left of the advertised window (Linux tcp_receive_window, never < 0).
  uint32_t receive_window() const { return seq_len(rcv_nxt_, rcv_wup_ + rcv_wnd_); }
  uint8_t rcv_wscale() const { return rcv_wscale_; }
  uint32_t window_clamp() const { return window_clamp_; }
  uint32_t rcv_ssthresh() const { return rcv_ssthresh_; }
  uint32_t rcvbuf() const { return rcvbuf_; }
  uint32_t rcv_mss() const { return rcv_mss_; }
  Duration ato() const { return ato_; }
  bool in_quickack_mode() const;
  bool in_pingpong_mode() const { return pingpong_ >= kPingpongThresh; }
  const Reassembly& ofo() const { return ofo_; }
  uint32_t data_segs_in() const { return data_segs_in_; }
  // Linux tcp_fastopen_active_disable_ofo_check's "one skb in the
  // out-of-order queue and it has FIN": a held FIN with at most one block
  // of data, ending at it.
  bool lone_ofo_fin() const {
    if (!ofo_fin_) return false;
    return ofo_.empty() || (ofo_.size() == 1 && ofo_.blocks().front().range.end == *ofo_fin_);
  }
  // tcp_info's receive fields: rcv_wnd, rcv_space, rcv_mss, rcv_ssthresh, ato,
  // rcv_rtt, rcv_ooopack, bytes_received, data_segs_in, rcv_wscale.
  void fill_info(TcpInfo& info) const;

 private:
  static constexpr uint32_t kMaxQuickAcks = 16;     // Linux TCP_MAX_QUICKACKS
  static constexpr uint32_t kPingpongThresh = 1;    // Linux TCP_PINGPONG_THRESH
  static constexpr uint32_t kMinRcvbuf = 4608;      // Linux SOCK_MIN_RCVBUF (2 x min truesize)
  static constexpr uint32_t kMssDefault = 536;      // RFC 9293 §3.7.1, Linux TCP_MSS_DEFAULT
  static constexpr uint32_t kMinMss = 88;           // Linux TCP_MIN_MSS
  static constexpr uint32_t kCompSackNr = 44;       // net.ipv4.tcp_comp_sack_nr
  static constexpr Duration kCompSackDelay = Duration::ms(1);  // tcp_comp_sack_delay_ns

  // The helpers select_window calls for every segment sent are defined here,
  // inline (out of line, GCC's -fPIC semantic interposition kept each a call).
  // Linux tcp_win_from_space with tcp_adv_win_scale: the share of the buffer
  // offered as window (the rest covers per-segment overhead). Data is charged
  // here by payload bytes, so the window budget is this share of the buffer.
  uint32_t win_from_space(uint64_t space) const {
    const int s = cfg_.tcp_adv_win_scale;
    const uint64_t w = s <= 0 ? space >> std::min(-s, 31) : space - (space >> std::min(s, 31));
    return static_cast<uint32_t>(std::min<uint64_t>(w, UINT32_MAX));
  }
  uint32_t space_from_win(uint64_t win) const;    // Linux tcp_space_from_win
  // Window the whole buffer allows (tcp_full_space).
  uint32_t full_space() const { return win_from_space(rcvbuf_); }
  uint32_t free_space() const { return free_space(full_space()); }  // left after queued data (tcp_space)
  uint32_t free_space(uint32_t full) const {                        // ... given full_space()
    const uint64_t used = rcvq_.size() + ofo_.bytes();
    return used >= full ? 0 : static_cast<uint32_t>(full - used);
  }
  uint32_t max_window() const { return 65535u << rcv_wscale_; }  // RFC 7323 §2.3
  // Linux __tcp_select_window, in bytes, and its side effect when space runs
  // low; the forms with arguments take free_space() and full_space() computed
  // once by the caller (select_window runs per segment sent).
  uint32_t compute_window() const { return compute_window(free_space(), full_space()); }
  uint32_t compute_window(uint32_t free, uint32_t allowed) const;
  // Up to a whole number of window-scale units. The unit is a power of two,
  // so this is a mask, not a division (this runs for every segment sent).
  uint64_t round_up_to_unit(uint32_t bytes) const {
    const uint64_t unit_mask = (uint64_t{1} << rcv_wscale_) - 1;
    return (uint64_t{bytes} + unit_mask) & ~unit_mask;
  }
  void damp_quickack() { damp_quickack(free_space(), full_space()); }
  void damp_quickack(uint32_t free, uint32_t allowed);
  void apply_window_clamp(uint32_t clamp);  // Linux tcp_set_window_clamp
  void init_buffer_space(Time now);         // Linux tcp_init_buffer_space
  void grow_window(uint32_t len);           // Linux tcp_grow_window
  void measure_rcv_mss(uint32_t len);       // Linux tcp_measure_rcv_mss
  void event_data_recv(Time now, uint32_t len, Duration rto, uint32_t gso_size);  // tcp_event_data_recv
  void rcv_rtt_measure(Time now);                  // per-window sample
  void rcv_rtt_update(Duration sample, bool win_dep);
  void rcv_space_adjust(Time now);                 // Linux tcp_rcv_space_adjust
  void incr_quickack(uint32_t max_quickacks);
  void enter_quickack(uint32_t max_quickacks);
  bool ack_snd_check(Time now, Duration srtt);     // Linux __tcp_ack_snd_check
  bool send_delayed_ack(Time now, Duration srtt);  // Linux tcp_send_delayed_ack
  bool cleanup_rbuf(size_t copied) const;          // Linux tcp_cleanup_rbuf
  void dsack_set(SeqRange r, Counters& c);
  void rcv_rtt_measure_ts(uint32_t len, Duration age);  // Linux tcp_rcv_rtt_measure_ts
  void flush_counters(Counters& c);
  // The pieces of on_data().
  DataOutcome on_old_data(Seq32 seq, uint32_t len, Seq32 end, Counters& c);
  void queue_in_order(Time now, std::span<const uint8_t> data, bool fin, Duration rto,
                      uint32_t gso_size, DataOutcome& out, Counters& c);
  void queue_ofo(Seq32 seq, std::span<const uint8_t> data, bool fin, DataOutcome& out,
                 Counters& c);
  uint64_t charged() const { return rcvq_.size() + ofo_.mem(); }

  ReceiverConfig cfg_;
  // RFC 9293 §3.3.1 receive sequence variables.
  Seq32 irs_;
  Seq32 rcv_nxt_;
  Seq32 rcv_wup_;          // rcv.nxt when rcv.wnd was last advertised (Linux rcv_wup)
  uint32_t rcv_wnd_ = 0;   // RCV.WND as last advertised, bytes (a multiple of 1 << shift)
  uint8_t rcv_wscale_ = 0; // RFC 7323 Rcv.Wind.Shift
  bool wscale_ok_ = false;
  bool sack_ok_ = false;
  bool timestamps_ = false;
  bool synced_ = false;
  bool initial_selected_ = false;
  uint32_t advmss_ = 1460;
  uint32_t peer_mss_ = 536;

  // Buffer and window accounting (Linux sk_rcvbuf, window_clamp, rcv_ssthresh).
  uint32_t rcvbuf_ = 0;
  uint32_t window_clamp_ = 0;  // 0: not set (Linux: the largest scalable window)
  uint32_t rcv_ssthresh_ = 0;
  uint32_t rcvlowat_ = 1;
  bool rcvbuf_locked_ = false;   // SO_RCVBUF set: no autotuning (SOCK_RCVBUF_LOCK)

  // The pieces of read(): how far one call may copy from `off` (the
  // distance from copied_seq) given the urgent mark; 0 ends the call.
  size_t urg_limit(size_t off, size_t want, bool copied, bool* skip) const;
  void after_read(Time now, size_t consumed);

  // Urgent data (Linux urg_data, urg_seq; SOCK_URGINLINE).
  UrgData urg_data_ = UrgData::kNone;
  uint8_t urg_byte_ = 0;
  Seq32 urg_seq_;
  bool urg_inline_ = false;

  // In-order data not yet read (bounded by the buffer).
  RcvQueue rcvq_;
  Seq32 copied_seq_;        // next byte the application will read (Linux copied_seq)
  bool fin_in_order_ = false;
  Reassembly ofo_;
  std::optional<Seq32> ofo_fin_;  // sequence number of a FIN held out of order
  uint64_t ofo_fin_stamp_ = 0;
  uint64_t stamp_ = 0;            // arrival counter for SACK block recency

  // D-SACK to report on the next ACK (RFC 2883).
  std::optional<SeqRange> dsack_;

  // Delayed ACK (Linux icsk_ack).
  bool ack_pending_ = false;   // ICSK_ACK_SCHED
  bool ack_timer_ = false;     // ICSK_ACK_TIMER
  bool ack_now_flag_ = false;  // ICSK_ACK_NOW
  bool pushed_ = false;        // ICSK_ACK_PUSHED
  bool pushed2_ = false;       // ICSK_ACK_PUSHED2
  Time delack_deadline_ = Time::never();
  Duration ato_ = Duration::zero();
  Time lrcvtime_;
  uint32_t quick_ = 0;      // quick ACKs left
  uint32_t pingpong_ = 0;   // interactive-mode count
  uint32_t rcv_mss_ = 536;
  uint32_t last_seg_size_ = 0;
  // SACK compression (Linux compressed_ack, dup_ack_counter).
  uint32_t compressed_ack_ = 0;
  uint32_t dup_ack_counter_ = 0;
  Seq32 compressed_ack_rcv_nxt_;
  Time comp_deadline_ = Time::never();
  uint64_t ack_compressed_unreported_ = 0;

  // Receiver RTT and autotuning (Linux rcv_rtt_est, rcvq_space).
  int64_t rcv_rtt8_us_ = 0;  // smoothed, microseconds << 3 (as Linux)
  Seq32 rtt_seq_;
  Time rtt_time_ = Time::never();
  uint32_t rcv_space_ = 0;
  Seq32 space_seq_;
  Time space_time_;

  // tcp_info counters.
  uint64_t bytes_received_ = 0;
  uint32_t data_segs_in_ = 0;
  uint32_t rcv_ooopack_ = 0;
  uint32_t last_tsecr_ = 0;
};

// Linux tcp_event_ack_sent: any segment with ACK acknowledges everything.
inline void Receiver::on_ack_sent(Time /*now*/) {
  ack_compressed_unreported_ += compressed_ack_;
  compressed_ack_ = 0;
  comp_deadline_ = Time::never();
  if (quick_ > 0) {  // Linux tcp_dec_quickack_mode
    const uint32_t pkts = ack_pending_ ? 1 : 0;
    if (pkts >= quick_) {
      quick_ = 0;
      ato_ = cfg_.ato_min;
    } else {
      quick_ -= pkts;
    }
  }
  ack_pending_ = false;
  ack_timer_ = false;
  ack_now_flag_ = false;
  pushed_ = false;
  pushed2_ = false;
  delack_deadline_ = Time::never();
  dsack_.reset();  // RFC 2883 §4: a D-SACK is reported once
}

// Linux tcp_event_data_sent: a reply sent within ATO of the last arrival
// looks interactive; ACKs then ride on the replies (delayed ACK mode).
inline void Receiver::on_data_sent(Time now) {
  if (ato_ > Duration::zero() && now - lrcvtime_ < ato_ && pingpong_ < 255) ++pingpong_;
}

}  // namespace weir::tcp
