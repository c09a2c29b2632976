// Why a `weir emu` departure missed its modelled time (issue 8: every packet
// within 50 us). Each forwarding thread notes what it was doing when it
// noticed a packet was due; a late packet is then blamed on the step that
// held it, so the report separates what the emulator can fix (how it sleeps,
// reads and writes) from what the machine imposes (preemption, how long the
// receiving stack takes inside a TUN write).
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "driver/histogram.h"
#include "weir/time.h"

namespace weir::driver {

enum class LateCause : uint8_t {
  kWrite,      // due while the thread was writing an earlier packet to the TUN
               // device (the write runs the receiving stack's input path)
  kRead,       // due while the thread was reading a batch from the device
  kWakeSleep,  // due while the thread slept, and it woke after the time: the
               // spin window did not cover the timer's lateness
  kWakeSpin,   // due while the thread was busy-polling, and the poll returned
               // late: the thread was preempted
  kOther,      // due while the thread was working, neither writing nor
               // reading (the loop's own work, or preemption between steps)
};
inline constexpr size_t kLateCauses = 5;
std::string_view late_cause_name(LateCause c);

// What the forwarding thread was doing when it ran the link up to "now":
// its last wait (epoll, sleeping or polling) and its last write.
struct DepartureContext {
  enum class Phase : uint8_t { kTimer, kRead } phase = Phase::kTimer;
  Time wait_start = Time::from_ns(0);
  Time wait_end = Time::from_ns(0);
  // Whether that wait could sleep (timerfd or a blocking epoll) rather
  // than poll.
  bool slept = true;
  // When the previous TUN write of this thread returned.
  Time prev_write_end = Time::from_ns(0);
};

// The step that held back a late packet due at `due`: what the thread was
// doing at `due`. Waiting: the wait ended late (a late wake-up, or a
// preempted poll). Working: a write still running at `due`, else the batch
// read, else the loop itself. So the packets that piled up during a stall
// are all blamed on the stall, and only those that fell due while the
// backlog was being written on the writes.
LateCause classify_late(Time due, const DepartureContext& ctx);

// Departure lateness split by cause (only packets later than the limit are
// blamed), how long each TUN write took, and the gaps between consecutive
// departures longer than `gap` (Linux's HyStart ends an ACK train at the
// first gap over hystart_ack_delta_us, 2 ms): whether the model already had
// the gap (the packets arrived that way) or the emulator made it.
class DepartureRecord {
 public:
  explicit DepartureRecord(Duration limit = Duration::us(50), Duration gap = Duration::ms(2))
      : limit_(limit), gap_(gap) {}
  // One departure: due at `due`, write from `start` to `end`.
  void add(Time due, Time start, Time end, const DepartureContext& ctx);
  const ErrorHistogram& all() const { return all_; }
  const ErrorHistogram& write_time() const { return write_; }
  const ErrorHistogram& late(LateCause c) const { return late_[static_cast<size_t>(c)]; }
  // Actual gaps over `gap` whose modelled gap was under it: made here.
  uint64_t gaps_added() const { return gaps_added_; }
  // Actual gaps over `gap` that the model had too (arrival spacing, idle).
  uint64_t gaps_modelled() const { return gaps_modelled_; }
  void merge(const DepartureRecord& o);
  // "late > 50us by cause: write 12 (0.10%, p99 <= 200us) read 3 ..." lines.
  std::string format_causes() const;

 private:
  Duration limit_;
  Duration gap_;
  Time prev_due_ = Time::never();
  Time prev_start_ = Time::never();
  uint64_t gaps_added_ = 0;
  uint64_t gaps_modelled_ = 0;
  ErrorHistogram all_;
  ErrorHistogram write_;
  std::array<ErrorHistogram, kLateCauses> late_{};
};

}  // namespace weir::driver
