#include "weir/counters.h"

namespace weir {

std::string_view counter_name(Counter c) {
  static constexpr std::string_view kNames[] = {
#define WEIR_COUNTER_NAME(n) #n,
      WEIR_COUNTERS(WEIR_COUNTER_NAME)
#undef WEIR_COUNTER_NAME
  };
  auto i = static_cast<size_t>(c);
  return i < std::size(kNames) ? kNames[i] : std::string_view("?");
}

}  // namespace weir
