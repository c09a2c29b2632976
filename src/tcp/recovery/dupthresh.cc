#include "tcp/recovery/dupthresh.h"

#include <algorithm>

namespace weir::tcp::recovery {

uint32_t mark_head_lost(Scoreboard& sb, uint32_t sacked_limit, bool mark_head) {
  uint32_t sacked_below = 0;
  uint32_t marked = 0;
  for (size_t i = 0; i < sb.size(); ++i) {
    const ScoreboardEntry& e = sb.at(i);
    if (e.sacked()) ++sacked_below;
    if (sacked_below > sacked_limit) break;
    if (!e.lost() && !e.sacked()) {
      sb.mark_lost(i);
      ++marked;
    }
    if (mark_head) break;
  }
  return marked;
}

uint32_t update_scoreboard(Scoreboard& sb, uint32_t reordering, bool fast_rexmit) {
  const int64_t sacked_upto = static_cast<int64_t>(sb.sacked_out()) - reordering;
  if (sacked_upto >= 0) return mark_head_lost(sb, static_cast<uint32_t>(sacked_upto), false);
  if (fast_rexmit) return mark_head_lost(sb, 1, true);
  return 0;
}

void Reordering::on_sack_reordering(uint32_t distance_bytes, uint32_t mss, bool ts, Counters& mib) {
  if (distance_bytes == 0) return;
  if (mss && distance_bytes > static_cast<uint64_t>(degree_) * mss) {
    degree_ = std::min((distance_bytes + mss - 1) / mss, max_);
  }
  ++seen_;
  mib.inc(ts ? Counter::TcpExtTCPTSReorder : Counter::TcpExtTCPSACKReorder);
}

void Reordering::on_reno_reordering(uint32_t packets_out, uint32_t addend, Counters& mib) {
  degree_ = std::min(max_, packets_out + addend);
  ++seen_;
  mib.inc(Counter::TcpExtTCPRenoReorder);
}

void Reordering::on_rto(bool open_or_disorder, uint32_t sacked_out, uint32_t sysctl_reordering) {
  if (open_or_disorder && sacked_out >= sysctl_reordering) {
    degree_ = std::min(degree_, sysctl_reordering);
  }
}

}  // namespace weir::tcp::recovery
