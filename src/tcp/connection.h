// One TCP connection (RFC 9293 §3.3.1's TCB): the state machine, dispatched
// on (state, event) to small handlers spread over files by concern:
//   connection.cc        opening, user calls (send/recv/shutdown/close), state changes
//   tcp_input_syn.cc     SYN-SENT and the handshake's option negotiation
//   tcp_input.cc         segment arrival in synchronized states (§3.10.7.4)
//   tcp_ack.cc           the ACK field: snd.una, send window, RTT, loss detection
//   tcp_output.cc        building segments; data transmission (tcp_write_xmit)
//   tcp_timer.cc         the timers: RTO, persist, delayed ACK, keepalive, TIME-WAIT
//   sockopt.cc / info.cc socket options; tcp_info
// The receive side is the Receiver, the per-packet send state the
// Scoreboard, congestion control a CongestionOps: the connection feeds them
// arguments and reads back decisions.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tcp/cc/cc.h"
#include "tcp/env.h"
#include "tcp/errqueue.h"
#include "tcp/isn.h"
#include "tcp/md5_keys.h"
#include "tcp/mtu_probe.h"
#include "tcp/pacing.h"
#include "tcp/receiver.h"
#include "tcp/recovery/recovery.h"
#include "tcp/rtt.h"
#include "tcp/scoreboard.h"
#include "tcp/send_buffer.h"
#include "tcp/sock_timeo.h"
#include "tcp/timers.h"
#include "util/ring_deque.h"
#include "weir/errors.h"
#include "weir/errqueue.h"
#include "weir/expected.h"
#include "weir/tcp_info.h"

namespace weir::tcp {

enum class State : uint8_t {
  kClosed, kListen, kSynSent, kSynReceived, kEstablished, kFinWait1, kFinWait2,
  kCloseWait, kClosing, kLastAck, kTimeWait,
};
const char* to_string(State s);  // "SYN-RECEIVED"
uint8_t linux_state(State s);    // TCP_ESTABLISHED = 1 ... TCP_LISTEN = 10

// Socket options a connection inherits from its listener (Linux copies the
// listening socket on accept).
struct SockOpts {
  bool nodelay = false;    // TCP_NODELAY
  bool cork = false;       // TCP_CORK
  bool keepalive = false;  // SO_KEEPALIVE
  bool reuseaddr = false;  // SO_REUSEADDR
  bool linger = false;     // SO_LINGER
  int linger_s = 0;
  int keepidle_s = 0;      // TCP_KEEPIDLE; 0: tcp_keepalive_time
  int keepintvl_s = 0;     // TCP_KEEPINTVL; 0: tcp_keepalive_intvl
  int keepcnt = 0;         // TCP_KEEPCNT; 0: tcp_keepalive_probes
  uint32_t user_timeout_ms = 0;  // TCP_USER_TIMEOUT
  uint16_t user_mss = 0;         // TCP_MAXSEG
  uint32_t sndbuf = 0;           // SO_SNDBUF (already doubled); 0: tcp_wmem
  uint32_t rcvbuf = 0;           // SO_RCVBUF as given (the receiver doubles it); 0: unset
  uint32_t window_clamp = 0;     // TCP_WINDOW_CLAMP; 0: unset
  uint32_t rcvlowat = 1;         // SO_RCVLOWAT
  uint32_t notsent_lowat = 0;    // TCP_NOTSENT_LOWAT; 0: sysctl
  int syncnt = 0;                // TCP_SYNCNT; 0: tcp_syn_retries
  int linger2_s = 0;             // TCP_LINGER2: FIN-WAIT-2 lifetime; 0: tcp_fin_timeout, -1: none
  uint8_t defer_accept = 0;      // TCP_DEFER_ACCEPT as SYN-ACK timeouts (rskq_defer_accept)
  bool thin_lto = false;         // TCP_THIN_LINEAR_TIMEOUTS
  std::string cc_name;           // TCP_CONGESTION; empty: sysctl
  // RFC 7413 Fast Open (Linux do_tcp_setsockopt).
  int fastopen_qlen = 0;            // TCP_FASTOPEN: the listener's max_qlen; 0: off
  bool fastopen_no_cookie = false;  // TCP_FASTOPEN_NO_COOKIE
  bool fastopen_connect = false;    // TCP_FASTOPEN_CONNECT
  std::string fastopen_key;         // TCP_FASTOPEN_KEY: 16 or 32 raw bytes; empty: the sysctl's
  bool zerocopy = false;            // SO_ZEROCOPY (Linux SOCK_ZEROCOPY)
  uint32_t tsflags = 0;             // SO_TIMESTAMPING (Linux sk_tsflags)
  uint32_t mark = 0;                // SO_MARK: kept and reported; weir has no policy routing or filter to match it
  bool oobinline = false;           // SO_OOBINLINE (Linux SOCK_URGINLINE): urgent data stays in the stream
  bool freebind = false;            // IP_FREEBIND / IPV6_FREEBIND: bind() to an address not (yet) ours
  // SO_RCVTIMEO / SO_SNDTIMEO in jiffies (Linux sk_rcvtimeo / sk_sndtimeo,
  // tcp/sock_timeo.h): how long a blocking call waits; the driver waits.
  int64_t rcvtimeo = kMaxScheduleTimeout;
  int64_t sndtimeo = kMaxScheduleTimeout;
  uint8_t save_syn = 0;             // TCP_SAVE_SYN: 1 network + TCP headers, 2 also the MAC header
  uint32_t tx_delay_us = 0;         // TCP_TX_DELAY (Linux tp->tcp_tx_delay)
  // IP header fields (tcp/ip_fields.h; Linux inet->tos, inet->uc_ttl,
  // np->tclass, np->hop_limit), copied to a passive open's child as
  // inet_csk_clone_lock copies the listener. DSCP only: TCP sets the ECN
  // field per segment (RFC 3168 §6.1.1).
  uint8_t ip_tos = 0;       // IP_TOS
  int16_t ip_ttl = -1;      // IP_TTL; -1: net.ipv4.ip_default_ttl
  uint8_t ipv6_tclass = 0;  // IPV6_TCLASS
  int16_t ipv6_hops = -1;   // IPV6_UNICAST_HOPS; -1: conf hop_limit
  // IPV6_AUTOFLOWLABEL (Linux AUTOFLOWLABEL / AUTOFLOWLABEL_SET); -1: never
  // set, net.ipv6.auto_flowlabels decides (tcp/flow_label.h).
  int8_t ipv6_autoflowlabel = -1;
  // SO_TXREHASH (Linux sk_txrehash): 1, a timeout or duplicate data draws
  // a new transmit hash. The stack sets it from net.core.txrehash when it
  // creates the socket, as inet6_create does.
  uint8_t txrehash = 1;
};

// How a listener answers a SYN under Fast Open (RFC 7413 §4.2.2): `child`
// creates the socket at once with the SYN's data; `reply` is the cookie
// option for the SYN-ACK, if any.
struct PassiveFastOpen {
  bool child = false;
  std::optional<wire::TcpFastOpen> reply;
};

// RFC 7413 §4.1 (active side): what the stack decided the SYN carries
// (tcp/fastopen_client.h client_decide).
struct ActiveFastOpen {
  std::optional<wire::TcpFastOpen> option;  // FO/FOEXP on the first SYN only
  bool send_data = false;                   // the write's head rides on the SYN
  uint16_t mss_clamp = 0;                   // cached peer MSS; 0: our advmss
  Time writer_until;                        // a blocking call waits to write the rest until then
  bool blackhole_probe = false;             // the first Fast Open after a pause (syn_fastopen_ch)
};

// Events the stack must act on after a call into the connection.
namespace conn_event {
inline constexpr uint8_t kEstablished = 0x01;  // a passive open completed: to the accept queue
inline constexpr uint8_t kClosed = 0x02;       // reached CLOSED: may be reaped
inline constexpr uint8_t kReadiness = 0x04;    // poll() bits may have changed
}  // namespace conn_event

// Why the engine dropped a segment (Linux skb drop reasons).
enum class DropReason : uint8_t {
  kNone, kPawsOld, kSeqOutOfWindow, kAckUnsent, kAckTooOld, kRstOutOfWindow, kSynInWindow,
  kNoAckFlag, kStateClosed, kListenOverflow, kBadSynAck, kZeroWindow, kRcvBuf, kAfterFin,
};
const char* to_string(DropReason r);

// RFC 3168 §6.1.1 / Linux tcp_ecn_create_request: a SYN asks for ECN with
// ECE and CWR both set; one that is itself ECN-capable is refused (it came
// through a broken middlebox). Any tcp_ecn but 0 accepts. A listener whose
// congestion control needs ECN (DCTCP) accepts any ECN-setup SYN.
bool ecn_syn_acceptable(const StackConfig& cfg, const InSegment& syn, bool cc_needs_ecn);

class Connection {
 public:
  Connection(TcpEnv& env, uint32_t id, const SockOpts& opts);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // ---- opening ----
  // Active open: SYN-SENT, the SYN goes out now (RFC 9293 §3.10.1).
  Errc open_active(Time now, const FourTuple& t);
  // RFC 7413 active open (Linux tcp_sendmsg_fastopen -> tcp_connect ->
  // tcp_send_syn_data): SYN-SENT with the SYN carrying `fo`'s option and as
  // much of `data` as fits; returns the bytes queued with the SYN.
  size_t open_active_fastopen(Time now, const FourTuple& t, const ActiveFastOpen& fo,
                              std::span<const uint8_t> data);
  // TCP_FASTOPEN_CONNECT (Linux tcp_fastopen_defer_connect): SYN-SENT with
  // the SYN held back until the first write (send_deferred_syn).
  void defer_active_open(Time now, const FourTuple& t);
  size_t send_deferred_syn(Time now, const ActiveFastOpen& fo, std::span<const uint8_t> data);
  bool fastopen_deferred() const { return active_fo_.deferred; }
  // Passive open from a listener's SYN: SYN-RECEIVED, SYN-ACK out.
  void open_passive(Time now, const FourTuple& t, const InSegment& syn, uint32_t listener,
                    const PassiveFastOpen& fo = {});
  // A valid SYN-cookie ACK (RFC 4987 §3.6): straight to ESTABLISHED.
  void open_from_cookie(Time now, const FourTuple& t, const InSegment& ack,
                        const CookieOptions& co, uint32_t listener);

  // ---- driver side ----
  void input(Time now, const InSegment& seg);
  void on_timers(Time now);  // fires every due timer
  Time next_deadline() const { return std::min(timers_.earliest(), pacer_.deadline()); }  // incl. pacing
  // ICMP: destination unreachable (soft/hard) and PMTU (RFC 1191, RFC 8201).
  void on_icmp_unreach(Time now, Errc err, bool hard, Seq32 quoted_seq);
  void ld_rto_revert(Time now, Seq32 quoted_seq);  // RFC 6069 TCP-LD (tcp_ld.cc)
  void on_pmtu(Time now, uint32_t mtu, Seq32 quoted_seq);
  // An ICMP error's quoted SEQ is outstanding (tcp_v4_err: between(seq, snd_una, snd_nxt)).
  bool icmp_quote_in_window(Seq32 quoted_seq) const;
  // Linux tcp_current_mss: adopt the destination's path MTU if it differs from the MSS's
  // (another connection learnt a lower one, or the learnt one expired).
  void sync_pmtu(uint32_t path_mtu);
  uint32_t pmtu() const { return pmtu_; }
  uint32_t segs_out() const { return segs_out_; }

  // ---- user calls (RFC 9293 §3.10) ----
  // `iov`: the lengths of the iovec elements (a MSG_ZEROCOPY send pins each
  // as page fragments); empty means one element.
  Expected<size_t, Errc> send(Time now, std::span<const uint8_t> data, int flags,
                              std::span<const uint32_t> iov = {});
  Expected<size_t, Errc> recv(Time now, std::span<uint8_t> out, int flags);
  // splice(socket -> pipe), one pass of Linux tcp_splice_read (tcp_urgent.cc):
  // bytes as tcp_read_sock takes them (up to the urgent mark); 0 at EOF, or
  // when a blocking call finds only the urgent byte (Linux breaks out rather
  // than wait: "we do not want to loop"); kAgain when a non-blocking call
  // finds nothing, or a blocking one must wait for data.
  Expected<size_t, Errc> splice_read(Time now, std::span<uint8_t> out, bool nonblock);
  Errc shutdown(Time now, int how);
  // The application closes its handle; the connection lives on (orphaned)
  // until it reaches CLOSED.
  void close(Time now);
  // ABORT (RFC 9293 §3.10.5): RST if synchronized, then CLOSED.
  void abort(Time now, Errc reason);
  Errc setsockopt(Time now, int level, int name, std::span<const uint8_t> val);
  Errc getsockopt(int level, int name, std::span<uint8_t> val, size_t* len) const;
  Errc ioctl(unsigned long req, int* out) const;
  // TCP_SAVE_SYN (Linux tcp_reqsk_record_syn, moved to the child by
  // tcp_move_syn): the headers of the SYN that opened this connection,
  // returned once by getsockopt(TCP_SAVED_SYN).
  void set_saved_syn(std::span<const uint8_t> headers) { saved_syn_.assign(headers.begin(), headers.end()); }
  Errc get_saved_syn(std::span<uint8_t> val, size_t* len) const;
  // TCP_TX_DELAY (Linux tcp_enable_tx_delay + tp->tcp_tx_delay), sockopt.cc.
  void set_tx_delay(uint32_t us);
  uint32_t poll() const;
  // TCP_REPAIR (tcp_repair.cc, Linux tcp.c): the connection is being
  // checkpointed or restored; getsockopt(TCP_TIMESTAMP) reads the TS clock
  // at `now` (the stack's latest time: getsockopt has none of its own).
  bool repair() const { return repair_.on; }
  uint32_t tcp_clock_ts(Time now) const { return tsval(now); }
  // recvmsg(MSG_ERRQUEUE) (tcp_errqueue.cc): the oldest entry, or EAGAIN.
  Expected<ErrQueueEntry, Errc> recv_error();
  // sk_error_report() calls so far: a wake-up for pollers (EPOLLET).
  uint64_t error_reports() const { return errq_.reports(); }
  const ErrQueue& errqueue() const { return errq_; }
  // A MSG_ZEROCOPY Fast Open send whose SYN took `queued` bytes
  // (tcp_sendmsg_fastopen with a uarg; 0: aborted, no id used).
  void zerocopy_syn_data(size_t requested, size_t queued);
  TcpInfo info(Time now) const;
  Errc take_error() const;  // SO_ERROR: reads and clears (sk_err is mutable, as in Linux)

  // ---- state ----
  uint32_t id() const { return id_; }
  State state() const { return state_; }
  const FourTuple& tuple() const { return tuple_; }
  uint32_t listener() const { return listener_; }
  void detach_listener() { listener_ = 0; }
  bool orphan() const { return orphan_; }
  uint8_t take_events() { uint8_t e = events_; events_ = 0; return e; }
  const SockOpts& opts() const { return opts_; }
  SockOpts& opts() { return opts_; }
  uint8_t tx_ecn() const { return tx_ecn_; }  // tcp/ip_fields.h get_ip_field
  // TCP_CONG_NEEDS_ECN (DCTCP): every segment ECT(0), SYNs too (INET_ECN_xmit).
  bool cc_needs_ecn() const { return cc_->needs_ecn(); }
  uint8_t syn_ecn() const { return cc_needs_ecn() ? kIpEct0 : 0; }
  uint32_t txhash() const { return txhash_; }  // Linux sk_txhash (tcp/flow_label.h)
  // RFC 2385 keys (TCP_MD5SIG) and the one for this connection's peer.
  md5::KeyList& md5_keys() { return md5_keys_; }
  const md5::KeyList& md5_keys() const { return md5_keys_; }
  const md5::Key* md5_key() const { return md5_keys_.empty() ? nullptr : md5_keys_.lookup(tuple_.remote.addr); }
  Seq32 snd_nxt() const { return snd_.nxt; }
  uint32_t ts_recent() const { return ts_recent_; }
  // /proc/net/tcp's "tr" and "tm->when" (Linux get_tcp4_sock): 1 for the
  // transmit slot's RTO/TLP/RACK timer, 4 for the zero-window probe, 2 for
  // sk_timer (keepalive, SYN-ACK and FIN-WAIT-2 timeouts), else 0.
  struct ProcTimer { int active = 0; Time expires = Time::never(); };
  ProcTimer proc_timer() const;
  uint32_t retransmits() const { return static_cast<uint32_t>(retransmits_); }
  uint8_t probes_out() const { return probes_out_; }
  bool ts_ok() const { return ts_ok_; }
  Time last_input() const { return last_rcv_; }
  // TIME-WAIT reuse (Linux tcp_twsk_unique / tcp_timewait_state_process):
  // a new SYN may take over if its ISN or TSval is beyond ours.
  bool timewait_accepts_syn(const InSegment& syn) const;
  // What a connect() that takes over this TIME-WAIT tuple inherits (Linux
  // tcp_twsk_unique): a sequence space past ours and the peer's TS.Recent,
  // so old duplicates fail PAWS on the new connection.
  struct TimeWaitSeed {
    Seq32 iss;
    uint32_t ts_recent = 0;
    Time ts_recent_stamp;
  };
  // Linux's inet_timewait_sock holds this tuple: TIME-WAIT, or an orphan's
  // FIN-WAIT-2 in its timewait stage (tcp_time_wait(sk, TCP_FIN_WAIT2,
  // tmo): tw_substate FIN_WAIT2, kept by the full connection here).
  bool timewait_sock() const { return state_ == State::kTimeWait || fin_wait2_timewait(); }
  bool fin_wait2_timewait() const { return fw2_timewait_ && state_ == State::kFinWait2; }
  // When the timewait sock began (Linux tw_entry_stamp, which its FIN-WAIT-2
  // to TIME-WAIT step keeps), or never outside it.
  Time time_wait_entry() const { return timewait_sock() ? tw_entry_ : Time::never(); }
  // The window field of every segment the timewait sock sends (Linux
  // tcp_v4_timewait_ack / tcp_v6_timewait_ack: tw_rcv_wnd >> tw_rcv_wscale):
  // frozen when it began, whatever the holder reads afterwards.
  uint16_t tw_window_field() const { return static_cast<uint16_t>(tw_rcv_wnd_ >> rcv_.rcv_wscale()); }
  // Linux enters TIME-WAIT as tcp_time_wait + tcp_done: a timewait sock
  // takes the tuple and the full socket is CLOSED. weir keeps one
  // connection for both: in TIME-WAIT it answers for the tuple as the
  // timewait sock, while whoever still holds the socket (the application,
  // or a listener's accept queue) sees CLOSE (tcpi_state 7, both
  // directions shut, shutdown() and getpeername() ENOTCONN, close() sends
  // nothing). end_time_wait: the timewait sock goes (its timer ran out, an
  // RST ended it, or a new connection took the tuple over).
  void end_time_wait(Time now);
  TimeWaitSeed time_wait_seed() const;
  // The next active open starts from `seed` instead of a fresh ISN.
  void seed_from_time_wait(const TimeWaitSeed& seed) { tw_seed_ = seed; }
  // A passive Fast Open socket whose handshake is not complete yet (Linux
  // tp->fastopen_rsk != NULL): it counts against the listener's TFO queue.
  // Linux tcp_fastopen_active_disable_ofo_check, when the socket goes:
  // what its receive side says about a Fast Open black hole.
  enum class FastOpenCloseCheck { kNone, kDisable, kForget };
  FastOpenCloseCheck fastopen_close_check() const;
  bool fastopen_pending() const { return fastopen_child_ && state_ == State::kSynReceived; }

 private:
  // --- connection.cc
  void set_state(Time now, State s);
  void become_established(Time now);
  void done(Time now, Errc err);  // -> CLOSED, error for the user
  void init_buffers();
  void init_mss();
  void update_mss(uint32_t pmtu);

  // --- tcp_mtu_probe.cc (RFC 4821 PLPMTUD; the search is mtu_probe.h's)
  MssMath mss_math() const;
  MtupConfig mtup_config() const;
  MtuProbe::Verdict mtu_probe(Time now);
  void mtu_probe_success(Time now);
  void mtu_probe_failed(Time now);
  void simple_retransmit(Time now);  // info.cc: Linux tcp_simple_retransmit
  void mark_oversized_lost();
  void mtu_blackhole(Time now);

  // --- send_space.cc (the send buffer as Linux accounts it)
  uint64_t wmem_queued() const;              // sk_wmem_queued
  uint32_t notsent_lowat() const;            // tcp_notsent_lowat
  bool stream_memory_free(int wake) const;   // __sk_stream_memory_free
  bool stream_writeable() const;             // __sk_stream_is_writeable(sk, 1)
  bool should_expand_sndbuf() const;         // tcp_should_expand_sndbuf
  void expand_sndbuf();                      // tcp_sndbuf_expand
  void check_space(Time now);                // tcp_check_space
  void write_space();                        // sk_stream_write_space
  bool queues_empty() const;                 // tcp_rtx_and_write_queues_empty
  uint32_t tail_room(uint32_t goal) const;
  void open_chunk(Time now);                 // tcp_skb_entail
  size_t copy_to_queue(Time now, std::span<const uint8_t> data);
  void split_sent_head();
  void mark_write_end(int flags, bool partial);
  void chrono_after_xmit(Time now, bool rwnd_limited);
  void chrono_sndbuf_check(Time now);
  void queue_fin(Time now);
  size_t queue_write(Time now, std::span<const uint8_t> data, int flags, std::span<const uint32_t> iov);

  // --- tcp_errqueue.cc (MSG_ZEROCOPY notifications; SO_TIMESTAMPING)
  bool zc_wanted(int flags, size_t size) const;
  bool zc_can_alloc() const;
  bool zc_can_merge(size_t size) const;
  size_t copy_zerocopy(Time now, std::span<const uint8_t> data, std::span<const uint32_t> iov);
  void count_frag(Seq32 from);
  void zc_after_send(size_t size, size_t copied, bool merge);
  void tstamp_after_send(size_t copied);
  Errc set_timestamping(uint32_t val);
  // Every transmission of [seq, end) (__dev_queue_xmit SCHED, skb_tx_timestamp SND).
  void tstamp_on_xmit(Time now, Seq32 seq, Seq32 end, bool sent);
  // SND.UNA moves from prior_una to ack (tcp_clean_rtx_queue: ACK
  // timestamps, zerocopy completions). Before the bytes leave sndq_.
  void errq_on_ack(Time now, Seq32 prior_una, Seq32 ack);
  void errq_purge();  // tcp_write_queue_purge
  struct TxStamp;
  void queue_tstamp(Time now, uint32_t type, const TxStamp& t, Seq32 from, Seq32 to, Seq32 una);
  std::vector<uint8_t> tstamp_opt_stats(Time now, uint32_t type, const TxStamp& t, Seq32 una) const;
  // Inline test first: with no sink (the usual case) an event costs a load
  // and a branch, not a call that sets up a sample (several per segment).
  void trace_event(Time now, TraceEvent ev, uint64_t a = 0, uint64_t b = 0) const {
    if (TraceSink* sink = env_.trace()) record_trace(*sink, now, ev, a, b);
  }
  void record_trace(TraceSink& sink, Time now, TraceEvent ev, uint64_t a, uint64_t b) const;
  bool synchronized() const;

  // --- tcp_repair.cc (Linux TCP_REPAIR: do_tcp_setsockopt / do_tcp_getsockopt)
  static bool is_repair_opt(int name);
  Errc set_repair_opt(Time now, int name, std::span<const uint8_t> val);
  Errc get_repair_opt(int name, std::span<uint8_t> val, size_t* len) const;
  Errc set_repair(Time now, int v);
  Errc set_repair_queue(int v);
  Errc set_queue_seq(uint32_t v);
  Errc set_repair_options(Time now, std::span<const uint8_t> val);
  Errc apply_repair_option(uint32_t code, uint32_t v);
  Errc set_repair_window(std::span<const uint8_t> val);
  Errc get_repair_window(std::span<uint8_t> val, size_t* len) const;
  Errc open_repaired(Time now, const FourTuple& t);
  Expected<size_t, Errc> repair_send(Time now, std::span<const uint8_t> data, int flags,
                                     std::span<const uint32_t> iov);
  Expected<size_t, Errc> repair_recv(std::span<uint8_t> out, int flags);
  void repair_xmit(Time now);
  void send_window_probe(Time now);
  Seq32 repair_rcv_nxt() const { return synchronized_rcv_ ? rcv_.rcv_nxt() : repair_.rcv_nxt; }

  // --- tcp_input_syn.cc
  void input_syn_sent(Time now, const InSegment& seg);
  void accept_syn_data(Time now, const InSegment& syn);  // tcp_fastopen.cc
  void fastopen_detect_blackhole(Time now, bool expired);  // tcp_fastopen_client.cc
  void fastopen_child_sent_synack();
  bool fastopen_ack(Time now, const InSegment& seg);
  void parse_syn_options(const wire::TcpOptions& o);
  // --- tcp_fastopen_client.cc (RFC 7413 active side)
  void init_active(Time now, const FourTuple& t);
  size_t queue_syn_data(Time now, const ActiveFastOpen& fo, std::span<const uint8_t> data);
  bool rcv_fastopen_synack(Time now, const InSegment& synack);
  void fastopen_syn_pmtu(Time now, uint32_t mtu);
  void finish_syn_negotiation(Time now, Seq32 irs);
  void send_reset_for(Time now, const InSegment& seg);

  // --- tcp_urgent.cc (RFC 9293 §3.8.5, RFC 6093; Linux tcp_urg, tcp_recv_urg, tcp_mark_urg)
  void urg_input(const InSegment& seg);
  Expected<size_t, Errc> recv_urg(std::span<uint8_t> out, int flags);
  void mark_urg();                           // send(MSG_OOB): SND.UP = end of the write
  // URG and SEG.UP on a segment while SND.UP is ahead. Inline, as the test
  // that settles it: urgent mode is rare and this runs for every segment sent.
  void urg_header(wire::TcpHeader& h) const {
    h.urgent = 0;
    if (urg_mode_) urg_pointer(h);
  }
  void urg_pointer(wire::TcpHeader& h) const;  // the rest of urg_header, in urgent mode
  void urg_acked();                          // SND.UNA reached SND.UP: urgent mode ends

  // --- tcp_input.cc
  bool paws_reject(Time now, const InSegment& seg) const;
  bool check_sequence(Time now, const InSegment& seg);
  bool check_rst(Time now, const InSegment& seg);
  bool check_syn(Time now, const InSegment& seg);
  void input_synchronized(Time now, const InSegment& seg);
  void process_data(Time now, const InSegment& seg);
  void process_fin(Time now);
  void update_ts_recent(Time now, const InSegment& seg);
  void data_snd_check(Time now);  // tcp_data_snd_check (send_space.cc)
  void input_time_wait(Time now, const InSegment& seg);
  void input_fin_wait2_timewait(Time now, const InSegment& seg);
  void send_challenge_ack(Time now, bool syn);
  // --- tcp_request.cc (Linux tcp_check_req: a passive open before its ACK)
  // A listener's child still in SYN-RECEIVED (Linux's request sock), or a
  // Fast Open child whose segments Linux still passes through
  // tcp_check_req; a simultaneous open never was a request. Inline: it is
  // asked for every segment received.
  bool is_request() const { return state_ == State::kSynReceived && (listener_ || fastopen_child_); }
  bool request_paws_reject(const InSegment& seg) const;
  bool request_in_window(const InSegment& seg) const;
  bool check_request(Time now, const InSegment& seg);
  void resend_synack(Time now);
  void fastopen_reset(Time now);
  void send_request_ack(Time now, uint8_t seg_tos);
  bool oow_rate_limited(Time now);

  // --- tcp_ack.cc
  bool process_ack(Time now, const InSegment& seg);  // false: drop the segment
  bool ack_acceptable(Time now, Seq32 ack);         // RFC 5961 §5.2 as Linux
  void update_send_window(const InSegment& seg, Seq32 ack);
  void rtt_from_ack(Time now, const InSegment& seg, const AckResult& r);
  recovery::RecoveryResult run_recovery(Time now, const InSegment& seg, const AckResult& r,
                                        Seq32 prior_una, bool win_update);
  void congestion_step(Time now, Seq32 ack, const AckResult& r, const recovery::RecoveryResult& out,
                       Seq32 prior_una, uint32_t prior_in_flight, bool ece);
  void apply_recovery_timers(Time now, const recovery::RecoveryResult& out);
  void ack_fin_state(Time now, const InSegment& seg);

  // --- tcp_output.cc
  wire::TcpHeader header(uint8_t flags, Seq32 seq) const;
  wire::TcpHeader& tx_header(uint8_t flags, Seq32 seq);  // header() in the reused template
  void add_ts(wire::TcpHeader& h, Time now) const;
  XmitResult emit(Time now, wire::TcpHeader& h, wire::PayloadView payload);
  IpFields ip_fields(uint8_t ecn) const;
  IpFields control_ip_fields() const;  // tcp_output.cc: the IP header of a segment
  // tcp_txhash.cc: the transmit hash (Linux sk_set_txhash / sk_rethink_txhash).
  void set_txhash() {
    txhash_ = env_.tx_rndhash();
    label_mode_ = -1;  // the cached label is stale
  }
  bool rethink_txhash();
  void timeout_rehash();
  void take_plb_rehash();  // what congestion control's PLB asked for (CcState::plb_rehash)
  void synack_rehash();
  void duplicate_data_rehash(const InSegment& seg);
  void dupack_rehash(const InSegment& seg);
  // tcp_event_data_recv -> tcp_save_lrcv_flowlabel (IPv6 only in Linux; an
  // IPv4 segment's label is 0 here and never compared).
  void save_lrcv_flowlabel(const InSegment& seg) { lrcv_flowlabel_ = seg.flow_label; }
  uint32_t flow_label() const;
  uint32_t socket_flow_label(const StackConfig& cfg) const;
  uint32_t reset_flow_label() const;
  void on_local_drop(Time now);  // tcp_enter_cwr on NET_XMIT_DROP
  void on_segment_dropped(Time now, SeqRange r, bool retransmit, bool tlp);
  XmitResult send_syn(Time now);  // the SYN and SYN-ACK stay queued when dropped (tcp_connect ignores it)
  XmitResult send_synack(Time now);
  void send_ack(Time now);
  void send_rst(Time now, Seq32 seq);
  // tcp_push_pending_frames; `one`: at most one burst (tcp_push_one).
  void push(Time now, bool more, bool one = false);
  bool rwnd_limited() const;
  bool send_one(Time now, Seq32 seq, uint32_t len, bool fin, bool retransmit, bool tlp = false,
                std::optional<bool> psh = std::nullopt);
  bool send_burst(Time now, uint32_t mss, bool more);
  // tso_defer.cc: tcp_write_xmit's tcp_tso_should_defer for the send head.
  bool tso_defer(Time now, uint32_t mss, bool push_one);
  uint32_t tso_segs() const;
  uint32_t tso_cap(uint32_t segs) const;  // min(segs, tso_segs()), computed only when it can matter
  uint32_t size_goal() const;
  void prune_chunks();
  // The handshake's acknowledgment of our SYN moves SND.UNA past it and any
  // SYN data it covers (tcp_input_syn.cc).
  void ack_syn(Time now, Seq32 ack);
  bool forced_push(Seq32 seq) const;
  size_t chunk_index(Seq32 seq) const;  // the chunk holding byte `seq`, or chunks_.size()
  bool psh_end(Seq32 end) const;        // a PSH-marked chunk ends at `end`
  uint32_t usable_window() const;
  bool nagle_allows(uint32_t len, uint32_t mss, bool push) const;
  XmitResult retransmit_head(Time now);
  // tcp_retrans_collapse.cc: Linux tcp_retrans_try_collapse.
  std::optional<bool> retrans_collapse(size_t index, Seq32 wnd_end, uint32_t cur_mss);
  bool record_end(Seq32 seq) const;  // MSG_EOR ends a chunk at `seq`
  bool zerocopy_at(Seq32 seq) const;  // the chunk holding `seq` has MSG_ZEROCOPY pages
  void rearm_after_local_drop(Time now);
  void retransmit_lost(Time now);
  void validate_cwnd(Time now, bool sent);  // tcp_cwnd_validate
  // Bytes of options on a data segment (Linux tcp_established_options):
  // timestamps (RFC 7323 §3, aligned to 12 bytes with two NOPs) and an RFC
  // 2385 signature (TCPOLEN_MD5SIG_ALIGNED, 20). SACK blocks are extra.
  uint32_t tcp_options_size() const { return (ts_ok_ ? 12 : 0) + (md5_key() ? wire::kMd5OptionAligned : 0); }
  // Linux tcp_current_mss (tcp_output.cc): mss_cache_ less this segment's
  // extra options. Inline up to the test that settles the common case.
  uint32_t current_mss() const {
    if (!(sack_ok_ && rcv_.has_sack_blocks()) && tcp_options_size() == mss_opts_) [[likely]] return mss_cache_;
    return current_mss_slow();
  }
  uint32_t current_mss_slow() const;

  // --- tcp_ecn.cc (RFC 3168; Linux tp->ecn_flags)
  void ecn_send_syn(wire::TcpHeader& h);
  void ecn_rcv_synack(const wire::TcpHeader& h);
  void ecn_rcv_syn(const wire::TcpHeader& h);
  // -> the IP ECN field. Inline, as the test that settles it: most
  // connections do not negotiate ECN, and this runs for every segment sent
  // (RFC 3168 §6.1.1: without ECN every packet is not-ECT, 0).
  uint8_t ecn_send(wire::TcpHeader& h, size_t payload_len) {
    return ecn_.ok ? ecn_send_ok(h, payload_len) : 0;
  }
  uint8_t ecn_send_ok(wire::TcpHeader& h, size_t payload_len);  // ecn_send on an ECN connection
  bool ecn_rcv_data(Time now, const InSegment& seg, bool* ack_now);  // true: quick-ACK mode (2 ACKs)
  void dctcp_ce_echo(Time now, uint8_t ce, bool* ack_now);    // RFC 8257 §3.2 receiver
  bool ecn_echo(const wire::TcpHeader& h) const;             // FLAG_ECE
  void ecn_after_recovery(uint32_t prior_reductions, bool withdraw);

  // --- tcp_timer.cc
  void arm_rto(Time now);
  void rearm_rto_after_ack(Time now);
  void set_xmit_timer(Time now, bool after_send);  // Linux tcp_set_xmit_timer / tcp_schedule_loss_probe
  bool lone_fin_in_flight() const;
  void on_loss_probe(Time now);
  void on_reorder_timer(Time now);
  uint32_t tsval(Time now) const { return static_cast<uint32_t>(now.ms()) + ts_offset_; }
  // `when`: instead of tcp_probe0_when (still clamped to TCP_USER_TIMEOUT).
  void arm_persist(Time now, std::optional<Duration> when = std::nullopt);
  void arm_keepalive(Time now);
  void arm_delack();
  void on_retransmit_timer(Time now);
  void on_rto(Time now);
  void enter_loss(Time now);  // Linux tcp_enter_loss
  void on_syn_rto(Time now);
  void retransmit_syn(Time now);
  void on_fastopen_synack_rto(Time now);  // tcp_fastopen.cc
  void on_probe0(Time now);
  void on_delack(Time now);
  void on_keepalive(Time now);
  bool defer_bare_ack(const InSegment& seg);
  bool req_timeout_resends(int limit, bool& expire);
  void enter_time_wait(Time now);
  void freeze_tw_window();
  void time_wait_overflow(Time now);
  void fin_wait2_timewait_fin(Time now, const InSegment& seg);
  Duration fin_time() const;
  static uint32_t max_packet(bool v4);
  bool thin_linear_timeout() const;
  void orphan_fin_wait2(Time now, const InSegment* ack);
  void enter_fin_wait2_timewait(Time now, Duration tmo);
  bool retries_exhausted(Time now, int limit, Duration user_timeout) const;
  Duration keepalive_idle() const;
  Duration keepalive_intvl() const;
  int keepalive_probes() const;
  XmitResult send_probe(Time now);
  // --- tcp_output.cc
  void sign_md5(wire::TcpHeader& h) const;

  TcpEnv& env_;
  const uint32_t id_;
  SockOpts opts_;
  // TCP_SAVED_SYN reads it and frees it (tcp_saved_syn_free), hence mutable,
  // as take_error() clears sk_err; empty: none.
  mutable std::vector<uint8_t> saved_syn_;
  md5::KeyList md5_keys_;
  State state_ = State::kClosed;
  FourTuple tuple_;
  uint32_t listener_ = 0;
  bool orphan_ = false;
  bool fw2_timewait_ = false;  // an orphan's FIN-WAIT-2 in its timewait stage (Linux tw_substate)
  // The receive window the timewait sock keeps and advertises (Linux
  // tcptw->tw_rcv_wnd = tcp_receive_window() in tcp_time_wait), in bytes.
  uint32_t tw_rcv_wnd_ = 0;
  // Linux tp->repair, tp->repair_queue and, until connect(), the RCV.NXT
  // that TCP_QUEUE_SEQ gave the receive queue (Linux writes tp->rcv_nxt,
  // which tcp_connect_init keeps under repair).
  struct Repair {
    bool on = false;
    uint8_t queue = 0;  // TCP_NO_QUEUE
    Seq32 rcv_nxt;
  } repair_;
  uint8_t events_ = 0;

  // RFC 9293 §3.3.1 send sequence variables.
  struct Snd {
    Seq32 una, nxt, wl1, wl2, iss;
    uint32_t wnd = 0;      // SND.WND in bytes (already scaled)
    uint32_t max_wnd = 0;  // largest SND.WND seen (RFC 5961 MAX.SND.WND)
    uint8_t wscale = 0;    // RFC 7323 Snd.Wind.Shift
  } snd_;
  Seq32 write_seq_;     // end of what the application wrote (Linux write_seq)
  Seq32 snd_sml_;       // end of the last small segment sent (Nagle, Minshall)
  Seq32 snd_max_;       // highest sequence ever sent (RFC 9293 SND.MAX)
  // RFC 9293 §3.3.1 SND.UP and Linux tcp_urg_mode (snd_una != snd_up): the
  // end of the last send(MSG_OOB), in force until SND.UNA reaches it.
  Seq32 snd_up_;
  bool urg_mode_ = false;
  bool fin_queued_ = false;  // the FIN follows write_seq
  bool fin_alone_ = false;   // the FIN first went out on its own (Linux: its own skb)
  bool syn_data_ = false;
  bool synchronized_rcv_ = false;
  bool push_once_ = false;  // Linux TCP_NAGLE_PUSH: uncork sends a partial segment once
  bool defer_cwnd_limited_ = false;  // the last tcp_write_xmit pass deferred for cwnd
  bool defer_rwnd_limited_ = false;  // ... or for the peer's window
  bool dst_pending_confirm_ = false;  // Linux sk_dst_pending_confirm (tcp_ack.cc)
  // RFC 7413 (Linux tcp_fastopen.c). fastopen_child_: a passive Fast Open
  // socket still in SYN-RECEIVED (Linux tp->fastopen_rsk), readable and
  // writable before the handshake completes. syn_data_acked_: the SYN's
  // data was acknowledged (TCPI_OPT_SYN_DATA). synack_cookie_: the Fast
  // Open option for the next SYN-ACK (only the first carries it).
  bool fastopen_child_ = false;
  bool syn_data_acked_ = false;
  std::optional<wire::TcpFastOpen> synack_cookie_;
  // The active side (Linux tp->fastopen_req, syn_fastopen, syn_data):
  // `option` goes on the first SYN only; syn_fastopen: it did; syn_data:
  // bytes the SYN carried, still in the send queue from ISS+1.
  struct ActiveFo {
    std::optional<wire::TcpFastOpen> option;
    bool syn_fastopen = false;
    bool exp = false;
    bool deferred = false;
    bool first_syn = false;  // the next SYN is the first (carries data and option)
    // sk_write_pending: a writer waits, until then, with data for after the
    // SYN-ACK (it stops at its SO_SNDTIMEO: inet_wait_for_connect returns).
    Time write_pending_until;
    bool blackhole_probe = false;  // tp->syn_fastopen_ch
    uint32_t syn_data = 0;
    Time syn_time;
  } active_fo_;

  // The write queue's chunks as Linux cuts it into skbs (tcp_sendmsg_locked):
  // where each ends, whether it carries PSH (tcp_mark_push) and whether it is
  // closed to more data (MSG_EOR). Segments never span two chunks. Covers
  // [SND.UNA, write_seq); bounded by kMaxChunks (the oldest merge).
  struct Chunk {
    Seq32 end;
    bool psh = false;
    bool eor = false;
    // Page fragments of MSG_ZEROCOPY data (Linux nr_frags): a chunk takes
    // no more data at kMaxSkbFrags (skb_zerocopy_iter_stream -EMSGSIZE).
    uint8_t frags = 0;
  };
  static constexpr uint8_t kMaxSkbFrags = 17;  // MAX_SKB_FRAGS with 4 KiB pages
  static constexpr size_t kMaxChunks = 4096;
  RingDeque<Chunk> chunks_;  // indexed by mask: chunk_index runs several times per burst
  mutable size_t chunk_hint_ = 0;  // chunk_index's last answer (only a hint: checked)
  Seq32 pushed_seq_;  // Linux pushed_seq: write_seq at the last PSH mark

  // MSG_ZEROCOPY (Linux ubuf_info_msgzc): one pending notification per
  // send, or per run of sends that joined the same unsent skb
  // (msg_zerocopy_realloc); `last` is the newest send's last byte.
  struct ZcNotification {
    uint32_t id = 0;
    uint32_t len = 0;
    uint32_t bytelen = 0;
    Seq32 last;
  };
  std::deque<ZcNotification> zc_pending_;
  uint32_t zckey_ = 0;  // sk_zckey: the next notification id
  // SO_TIMESTAMPING: the last byte of each timestamped send (shinfo->tskey)
  // with what to record; one per skb, as Linux keeps it in skb_shinfo.
  struct TxStamp {
    Seq32 key;
    bool sched = false, snd = false, ack = false;
    Time xmit = Time::never();  // its skb's last transmission (OPT_STATS' TCP_NLA_EDT)
  };
  std::deque<TxStamp> tx_stamps_;
  uint8_t in_ttl_ = 0;  // the segment being processed: its TTL or hop limit
  Seq32 tskey_base_;  // sk_tskey: SND.UNA (or write_seq) when OPT_ID was set
  ErrQueue errq_;

  Receiver rcv_;
  Scoreboard sb_;
  RttEstimator rtt_;
  SendBuffer sndq_;
  SkbLedger skbs_;      // transmitted skbs still queued (sk_wmem_queued)
  ChronoStats chrono_;  // tcp_info busy / rwnd- / sndbuf-limited time
  bool nospace_ = false;  // SOCK_NOSPACE: a write ran out of buffer, no wake-up since
  TimerSet timers_;
  std::unique_ptr<cc::CongestionControl> cc_;
  cc::CcState ccs_;
  Pacer pacer_;  // internal pacing (tcp/pacing.h)
  recovery::RecoveryMachine rec_;

  // RFC 3168 state (Linux tp->ecn_flags: TCP_ECN_OK, _QUEUE_CWR, _DEMAND_CWR, _SEEN).
  struct EcnFlags {
    bool ok = false;          // negotiated on the handshake
    bool queue_cwr = false;   // the sender reduced its window: CWR on the next new data
    bool demand_cwr = false;  // a CE mark arrived: ECE on every segment until CWR comes
    bool seen = false;        // an ECT or CE packet arrived (TCPI_OPT_ECN_SEEN)
  } ecn_;
  // The ECN field of the last segment sent: Linux INET_ECN_xmit /
  // INET_ECN_dontxmit keep it in inet->tos, which getsockopt(IP_TOS) reads.
  uint8_t tx_ecn_ = 0;
  // The transmit hash and its rehashes (tcp/flow_label.h; tcp_txhash.cc).
  uint32_t txhash_ = 0;          // Linux sk_txhash; 0: none drawn yet
  uint32_t req_txhash_ = 0;      // a Fast Open child's request's (tcp_rsk(req)->txhash) once redrawn; 0: txhash_
  mutable bool synack_of_request_ = false;  // the segment going out is a Fast Open child's SYN-ACK (send_synack)
  uint32_t timeout_rehash_ = 0;  // tp->timeout_rehash (tcpi_rehash)
  uint32_t plb_rehash_ = 0;      // tp->plb_rehash (tcpi_rehash)
  uint32_t lrcv_flowlabel_ = 0;  // icsk_ack.lrcv_flowlabel: the label of the last data received
  // The label of the socket's own segments, made once per hash and kept
  // with what it was made from (the two sysctls, IPV6_AUTOFLOWLABEL), so a
  // segment only compares them (socket_flow_label); -1: none made yet.
  mutable uint32_t label_ = 0;
  mutable int8_t label_mode_ = -1;
  mutable int8_t label_ranges_ = 0;
  mutable int8_t label_opt_ = 0;

  // The header of data segments and ACKs, reused (tx_header): building a
  // fresh ~290-byte TcpHeader cost its zeroing on every segment sent.
  wire::TcpHeader tx_hdr_;

  // Negotiated options.
  bool ts_ok_ = false;
  bool sack_ok_ = false;
  bool wscale_ok_ = false;
  uint8_t rcv_wscale_offer_ = 0;
  uint32_t ts_offset_ = 0;
  uint32_t ts_recent_ = 0;        // RFC 7323 TS.Recent
  Time ts_recent_stamp_;
  Time tw_entry_;                       // when TIME-WAIT began
  std::optional<TimeWaitSeed> tw_seed_;  // set by a connect() that recycles TIME-WAIT
  uint16_t peer_mss_ = 536;       // RFC 9293 §3.7.1: default when absent
  uint32_t advmss_ = 1460;        // what we announce
  uint32_t pmtu_ = 1500;
  uint32_t mss_cache_ = 536;      // effective send MSS, options excluded
  uint32_t mss_opts_ = 0;         // the option bytes mss_cache_ was sized for (Linux tcp_header_len - 20)
  uint32_t init_cwnd_ = 10;       // Linux tcp_init_cwnd: the route's initcwnd or TCP_INIT_CWND
  MtuProbe mtup_;                 // Linux icsk_mtup
  uint32_t sndbuf_ = 0;

  // Retransmission and recovery (Linux icsk_* and tcp_sock fields).
  int backoff_ = 0;               // icsk_backoff
  int retransmits_ = 0;           // icsk_retransmits
  uint8_t req_timeouts_ = 0;      // a request's timer expiries (req->num_timeout)
  bool req_acked_ = false;        // a deferred bare ACK arrived (inet_rsk(req)->acked)
  uint8_t probes_out_ = 0;        // icsk_probes_out
  Time probes_tstamp_ = Time::never();  // icsk_probes_tstamp: first zero-window probe of this stall
  Time retrans_stamp_ = Time::never();  // first (re)transmission of the head being retried
  Time rto_stamp_ = Time::never();
  CaState ca_state_ = CaState::Open;
  uint32_t total_retrans_ = 0;
  uint16_t total_rto_ = 0;
  uint32_t synack_retries_ = 0;

  // Errors and shutdown.
  mutable Errc error_ = Errc::kOk;       // sk_err: reported once by the next call / SO_ERROR
  mutable Errc soft_error_ = Errc::kOk;  // sk_err_soft (ICMP while retrying)
  bool rd_shut_ = false;
  bool wr_shut_ = false;
  bool reset_ = false;
  bool was_established_ = false;

  // Rate limits and timestamps of activity.
  Time last_oow_ack_ = Time::never();  // Linux last_oow_ack_time
  bool synack_resent_ = false;  // a repeated SYN drew the SYN-ACK again (req->num_retrans)
  int16_t reply_tos_ = -1;      // >= 0: this segment answers one with that TOS (tcp_request.cc)
  Time last_rcv_;
  Time last_snd_data_;
  Time last_rcv_data_;
  Time last_ack_rcv_;
  Time established_at_;

  // tcp_info counters.
  uint64_t bytes_acked_ = 0;
  uint64_t bytes_sent_ = 0;
  uint64_t bytes_retrans_ = 0;
  uint32_t segs_out_ = 0;
  uint32_t segs_in_ = 0;
  uint32_t data_segs_out_ = 0;
  uint32_t delivered_ = 0;
  uint32_t dsack_dups_ = 0;
};

}  // namespace weir::tcp
