// A minimal expected<T, E> (C++23's std::expected is not in GCC 12's C++20).
// Parsers and operations return these; the engine never throws.
#pragma once

#include <utility>
#include <variant>

namespace weir {

template <typename E>
struct Unexpected {
  // A constructor, not only aggregate init, so `Unexpected(e)` also compiles
  // under Clang 14, which lacks C++20 parenthesized aggregate initialization.
  constexpr explicit Unexpected(E e) : error(std::move(e)) {}
  E error;
};
template <typename E>
Unexpected(E) -> Unexpected<E>;

template <typename T, typename E>
class Expected {
 public:
  Expected(T v) : v_(std::in_place_index<0>, std::move(v)) {}  // NOLINT: implicit by design
  Expected(Unexpected<E> e) : v_(std::in_place_index<1>, std::move(e.error)) {}  // NOLINT
  // A T built in place from `args`, filled by the caller afterwards: a large
  // T (a parsed packet) is then never copied on its way out.
  template <typename... Args>
  explicit Expected(std::in_place_t, Args&&... args)
      : v_(std::in_place_index<0>, std::forward<Args>(args)...) {}

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const E& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, E> v_;
};

}  // namespace weir
