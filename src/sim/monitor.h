// The flow monitor: watches each flow's packets where they leave and reach
// the hosts, independently of the TCP engine, and measures what the sender
// must never get wrong or could be fooled about:
//  - bytes sent beyond the largest right edge the receiver ever advertised
//    (RFC 9293 §3.8.6: a receiver must accept data up to an edge it has
//    offered, so anything past it is the sender's fault: seed 000);
//  - retransmissions, and which of them were spurious (the receiver already
//    had every byte: proof a cwnd undo may rely on, seed 003);
//  - RTT samples from data to the ACK covering it (Karn: new data only);
//  - the time-sequence graph: data sent, ACKs, SACK blocks.
// Flows are recognised by port: client port 40000+i to server port 5000+i.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "sim/packet.h"
#include "weir/seq.h"
#include "weir/time.h"

namespace weir::sim {

inline constexpr uint16_t kClientPortBase = 40000;
inline constexpr uint16_t kServerPortBase = 5000;

struct SeqPoint {
  Time t;
  uint32_t begin;  // relative to the first data byte (ISN + 1)
  uint32_t end;
  bool retrans;
};

struct FlowWatch {
  // Handshake, as seen on the wire.
  bool syn_seen = false, synack_seen = false;
  Seq32 isn;          // client ISN (data direction: client -> server)
  Seq32 peer_isn;     // server ISN
  int client_wscale = -1;
  int server_wscale = -1;
  // Window accounting (sender's side of the path).
  bool edge_known = false;
  Seq32 max_edge;     // largest right edge (ack + scaled window) seen by the sender
  Seq32 high_sent;    // highest sequence sent + 1
  bool sent_any = false;
  uint64_t bytes_beyond_wnd = 0;
  uint64_t segs_beyond_wnd = 0;
  uint64_t max_adv_wnd = 0;   // largest scaled window the sender was offered
  // Retransmissions.
  uint64_t data_segs = 0;
  uint64_t retrans_segs = 0;
  uint64_t retrans_bytes = 0;
  uint64_t spurious_segs = 0;
  std::vector<Time> spurious_sent;  // send times of retransmissions found spurious
  // Receiver's side: which bytes arrived.
  uint32_t rcv_contig = 0;                 // all relative bytes below this arrived
  std::map<uint32_t, uint32_t> rcv_ooo;    // [begin, end) above rcv_contig
  uint64_t dup_arrivals = 0;
  // RTT (Karn): outstanding new-data segments awaiting their ACK.
  struct Pending {
    Seq32 begin, end;
    Time sent;
    bool valid;  // false once any of its bytes was retransmitted (RFC 6298 §3, Karn)
  };
  std::vector<Pending> rtt_pending;  // ascending by sequence
  size_t rtt_head = 0;
  uint64_t rtt_samples = 0;
  Duration rtt_min = Duration::infinite(), rtt_max;
  double rtt_sum_ns = 0;
  // Time-sequence graph, bounded.
  std::vector<SeqPoint> sent;
  std::vector<std::pair<Time, uint32_t>> acks;
  std::vector<SeqPoint> sacks;
  std::vector<std::pair<Time, Duration>> rtts;
  bool tsg_truncated = false;
};

class Monitor {
 public:
  explicit Monitor(size_t flows, size_t max_points = 300000) : flows_(flows), cap_(max_points) {}
  // A packet leaves a host (fills p->meta), or reaches one.
  void on_tx(Time now, Packet& p);
  void on_rx(Time now, const Packet& p);
  const FlowWatch& flow(size_t i) const { return flows_[i]; }
  size_t size() const { return flows_.size(); }
  uint64_t unknown_packets() const { return unknown_; }

 private:
  void sender_tx(Time now, FlowWatch& f, Packet& p, Seq32 seq, uint32_t len, bool syn);
  void sender_rx_ack(Time now, FlowWatch& f, const struct AckView& a);
  void receiver_rx(FlowWatch& f, const Packet& p);
  bool room(const FlowWatch& f, size_t n) const { return n < cap_ && !f.tsg_truncated; }

  std::vector<FlowWatch> flows_;
  size_t cap_;
  uint64_t unknown_ = 0;
};

}  // namespace weir::sim
