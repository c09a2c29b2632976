// The syntax tree of a packetdrill script (google/packetdrill's .pkt
// language): header options, then timed events. Values stay close to the
// text so that a failure can print the line the way the author wrote it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "weir/time.h"

namespace weir::pkt {

struct SourcePos {
  int line = 0;
  int column = 0;
};

// When an event happens. packetdrill: `0.1` absolute, `+0.1` relative to
// the previous event, `*` any time, `a~b` / `+a~+b` a window (outbound
// packets), `a...b` a blocking system call that starts at a and returns at b.
enum class TimeKind { kAbsolute, kRelative, kAny, kAbsoluteRange, kRelativeRange };

struct TimeSpec {
  TimeKind kind = TimeKind::kAbsolute;
  Duration start;
  Duration end;                       // the window's end, for ranges
  std::optional<Duration> block_end;  // `...end`: a blocking call's return time
};

// A value in a system call: integers, symbols (SOL_SOCKET), strings, `...`,
// lists `[..]`, structs `{..}`, fields `name=value` and `name(args)=value`,
// calls `htons(8080)`, and OR-ed flags `A|B`.
struct Expr {
  enum class Kind { kInt, kWord, kString, kEllipsis, kList, kStruct, kField, kCall, kOr };
  Kind kind = Kind::kInt;
  int64_t num = 0;
  std::string text;         // the word, string, field or call name; the number's text
  std::vector<Expr> items;  // list / struct / OR members; a field's value is items[0]
  std::vector<Expr> args;   // call arguments, and `name(args)=value` fields
  bool has_args = false;
  SourcePos pos;

  const Expr* field(std::string_view name) const;  // a struct member by name
};

struct SyscallSpec {
  std::string name;
  std::vector<Expr> args;
  Expr result;
  std::string errno_name;  // "EAGAIN" when the script expects -1 EAGAIN
  std::string note;        // the parenthesised text after the result
};

// One TCP option as the script writes it.
struct OptionSpec {
  enum class Kind { kNop, kEol, kMss, kWscale, kSackOk, kSack, kTimestamp, kFastOpen,
                    kFastOpenExp, kMd5, kUnknown };
  Kind kind = Kind::kNop;
  uint32_t a = 0;  // mss, wscale, TS val
  uint32_t b = 0;  // TS ecr
  std::vector<std::pair<uint32_t, uint32_t>> blocks;  // sack a:b (script-relative)
  std::string text;  // the Fast Open cookie (hex) or the unknown option's words
};

enum class Ecn { kUnset, kNotEct, kEct0, kEct1, kEct01, kCe };

struct PacketSpec {
  bool inbound = true;  // `<`: to the stack; `>`: from the stack
  // [ect0|ect1|ce|tos T|ttl N|flowlabel F]
  Ecn ecn = Ecn::kUnset;
  std::optional<uint32_t> tos;
  std::optional<uint32_t> ttl;
  std::optional<uint32_t> flowlabel;
  std::vector<std::string> ip_unknown;  // other bracketed words (unsupported)

  // TCP. Sequence numbers are script-relative (0 is the ISN of the sender).
  std::string flags_text;  // "S.", "P.", "-"
  uint16_t flags = 0;      // wire bits; 0x100 for AE ('A')
  uint32_t seq_start = 0;
  uint32_t seq_end = 0;
  uint32_t len = 0;
  std::optional<uint32_t> ack;
  std::optional<uint32_t> win;
  std::optional<uint32_t> urg;
  // No `<...>` at all: no options; `<...>` given as `...`: options unchecked.
  bool options_given = false;
  bool options_any = false;
  std::vector<OptionSpec> options;

  // ICMP error lines: `< icmp unreachable frag_needed mtu 800 [0:10(10)]`.
  bool icmp = false;
  std::string icmp_type;
  std::string icmp_code;
  std::optional<uint32_t> icmp_mtu;
  bool icmp_has_quote = false;
};

struct CommandSpec {
  std::string text;  // the backquoted shell text, as written
};

struct CodeSpec {
  std::string text;  // the %{ }% body, trimmed of spaces and tabs
};

struct Event {
  SourcePos pos;
  bool timed = true;  // untimed: a set-up or clean-up command outside the timeline
  TimeSpec time;
  std::variant<PacketSpec, SyscallSpec, CommandSpec, CodeSpec> action;
};

struct Script {
  std::string path;
  std::vector<std::pair<std::string, std::string>> options;  // --name[=value]
  std::vector<Event> events;
};

struct ParseError {
  std::string path;
  SourcePos pos;
  std::string message;
  std::string to_string() const;  // "file:line:column: message"
};

}  // namespace weir::pkt
