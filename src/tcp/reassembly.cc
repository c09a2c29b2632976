#include "tcp/reassembly.h"

namespace weir::tcp {

OfoInsert Reassembly::insert(Seq32, std::span<const uint8_t>, uint64_t) { return {}; }
uint32_t Reassembly::pull(Seq32, std::deque<uint8_t>&) { return 0; }
uint32_t Reassembly::prune(uint64_t) { return 0; }
uint32_t Reassembly::drop_from(Seq32) { return 0; }
const OfoBlock* Reassembly::find(Seq32) const { return nullptr; }
void Reassembly::clear() { blocks_.clear(); bytes_ = 0; }

}  // namespace weir::tcp
