// Whether this test binary is the sanitizer build (-O0, ASan: CI's second
// suite), where long runs shrink so the suite stays within CI's time.
#pragma once

namespace weir::test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace weir::test
