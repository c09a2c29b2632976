// Applications on the socket API, one pair per flow: a sender (bulk, record
// writer, request/response client) on the client host and a receiver (sink,
// slow reader, request/response server) on the server host. Payload bytes
// follow a fixed pattern so the receiver checks every byte it reads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/host.h"
#include "sim/scenario.h"
#include "weir/tcp_info.h"

namespace weir::sim {

// What a flow's two applications observed.
struct FlowStats {
  Time start;
  bool connected = false;
  Time connected_at;
  std::string error;            // first socket error, if any
  uint64_t bytes_written = 0;
  uint64_t bytes_read = 0;
  uint64_t payload_errors = 0;  // bytes read that differ from what was written
  bool writer_done = false;     // all bytes written and SHUT_WR issued
  bool completed = false;       // receiver read everything and saw EOF (bulk) / all responses (rr)
  Time completed_at;
  uint64_t delivered_at_mark = 0;  // bytes read by start + delivered_at
  uint64_t bytes_before_window = 0;  // bytes read before the scenario's measure_from
  std::vector<std::pair<Time, uint64_t>> read_progress;  // (time, total bytes read), thinned
  std::vector<Duration> rr_latency;
  std::optional<TcpInfo> sender_info;  // taken at the end of the run
  std::optional<TcpInfo> receiver_info;
  SocketId sender_socket = kNoSocket;
  SocketId receiver_socket = kNoSocket;
};

// The payload pattern: byte `offset` of a flow's stream.
const uint8_t* pattern_at(uint64_t offset, size_t* contiguous);

class SenderApp final : public App {
 public:
  SenderApp(Host& host, const FlowSpec& spec, const Endpoint& server, FlowStats& st);
  void on_event(Time now, uint64_t tag) override;
  void on_ready(Time now) override;
  void snapshot(Time now);

 private:
  void open(Time now);
  void pump(Time now);
  void rr_step(Time now);
  bool more_to_write(Time now) const;
  void fail(const char* what, Errc e);

  Host& host_;
  FlowSpec spec_;
  Endpoint server_;
  FlowStats& st_;
  SocketId s_ = kNoSocket;
  size_t record_index_ = 0;
  uint64_t record_left_ = 0;
  bool shut_ = false;
  // request/response
  uint32_t rr_done_ = 0;
  uint64_t rr_sent_ = 0;
  uint64_t rr_got_ = 0;
  Time rr_t0_;
};

class ReceiverApp final : public App {
 public:
  ReceiverApp(Host& host, const FlowSpec& spec, const Endpoint& listen_on, FlowStats& st);
  void on_event(Time now, uint64_t tag) override;
  void on_ready(Time now) override;
  void snapshot(Time now);

 private:
  void read_some(Time now, uint64_t budget);
  void consume(Time now, const uint8_t* data, size_t n);
  void rr_serve(Time now);
  void schedule_tick(Time now);

  Host& host_;
  FlowSpec spec_;
  FlowStats& st_;
  SocketId listener_ = kNoSocket;
  SocketId s_ = kNoSocket;
  bool eof_ = false;
  bool tick_pending_ = false;
  uint64_t rr_in_ = 0;      // request bytes received in this transaction
  uint64_t rr_out_ = 0;     // response bytes still to write
  uint64_t rr_written_ = 0;
  std::vector<uint8_t> buf_;
};

}  // namespace weir::sim
