// Recursive descent over the token list. The grammar mirrors packetdrill's
// parser.y for everything the TCP scripts use; where packetdrill has a
// construct we do not model (UDP, GRE, MPTCP options) the parser still
// accepts the shape so the runner can skip the script with a reason.
#include "pkt/parser.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "pkt/lexer.h"

namespace weir::pkt {

const Expr* Expr::field(std::string_view name) const {
  for (const Expr& e : items)
    if (e.kind == Kind::kField && e.text == name) return &e;
  return nullptr;
}

namespace {

class Parser {
 public:
  Parser(std::vector<Token> toks, const std::string& path) : t_(std::move(toks)), path_(path) {}

  Expected<Script, ParseError> parse() {
    Script s;
    s.path = path_;
    while (cur().kind == Token::Kind::kOption) {
      const std::string& o = cur().text;
      size_t eq = o.find('=');
      s.options.emplace_back(o.substr(0, eq), eq == std::string::npos ? "" : o.substr(eq + 1));
      advance();
    }
    while (cur().kind != Token::Kind::kEnd) s.events.push_back(event());
    if (failed_) return Unexpected{err_};
    return s;
  }

 private:
  // The error is sticky, not thrown: fail() records the first one and moves
  // to the end token, where every loop below stops; parse() then returns it.
  // What the functions build after a failure is discarded.
  const Token& cur() const { return t_[i_]; }
  void advance() {
    if (i_ + 1 < t_.size()) ++i_;  // never past the end token
  }
  const Token& take() {
    const Token& t = cur();
    advance();
    return t;
  }
  bool ok() const { return !failed_; }
  const Token& look(size_t k) const { return t_[std::min(i_ + k, t_.size() - 1)]; }

  void fail(const Token& at, std::string_view expected) {
    if (!failed_) err_ = {path_, at.pos, fmt::format("expected {}, got {}", expected, describe(at))};
    failed_ = true;
    i_ = t_.size() - 1;
  }
  void expect(char c, std::string_view what) {
    if (!cur().is(c)) return fail(cur(), what);
    advance();
  }
  bool accept(char c) {
    if (!cur().is(c)) return false;
    advance();
    return true;
  }
  bool accept_word(std::string_view w) {
    if (!cur().is_word(w)) return false;
    advance();
    return true;
  }
  uint32_t u32(std::string_view what) {
    if (cur().kind != Token::Kind::kInt || cur().num < 0 || cur().num > 0xffffffffll) {
      fail(cur(), what);
      return 0;
    }
    return static_cast<uint32_t>(take().num);
  }

  // A time in seconds: integer or float token.
  Duration seconds(std::string_view what) {
    const Token& t = cur();
    if (t.kind != Token::Kind::kInt && t.kind != Token::Kind::kFloat) {
      fail(t, what);
      return {};
    }
    const double v = t.kind == Token::Kind::kInt ? static_cast<double>(t.num) : t.real;
    // Nanoseconds in 64 bits reach ~292 years; a larger time is an error,
    // not a wrapped Duration.
    if (!(std::fabs(v) <= 1e9)) {
      fail(t, "a time under 1e9 seconds");
      return {};
    }
    advance();
    return Duration::us(std::llround(v * 1e6));
  }

  TimeSpec time_spec() {
    TimeSpec ts;
    if (accept('*')) {
      ts.kind = TimeKind::kAny;
      return ts;
    }
    bool rel = accept('+');
    ts.kind = rel ? TimeKind::kRelative : TimeKind::kAbsolute;
    ts.start = seconds("a time ('0', '+.1', '*')");
    if (accept('~')) {
      bool rel_end = accept('+');
      if (rel != rel_end) fail(cur(), rel ? "a relative range end ('+N')" : "an absolute range end");
      ts.kind = rel ? TimeKind::kRelativeRange : TimeKind::kAbsoluteRange;
      ts.end = seconds("the end of the time range");
    } else if (cur().kind == Token::Kind::kEllipsis) {
      advance();
      ts.block_end = seconds("the end time of a blocking call after '...'");
    }
    return ts;
  }

  Event event() {
    Event e;
    e.pos = cur().pos;
    if (cur().kind == Token::Kind::kBackquote) {  // untimed set-up / clean-up command
      e.timed = false;
      e.action = CommandSpec{take().text};
      return e;
    }
    e.time = time_spec();
    const Token& t = cur();
    if (t.is('<') || t.is('>')) e.action = packet();
    else if (t.kind == Token::Kind::kBackquote) e.action = CommandSpec{take().text};
    else if (t.kind == Token::Kind::kCode) e.action = CodeSpec{take().text};
    else if (t.kind == Token::Kind::kWord && look(1).is('(')) e.action = syscall();
    else fail(t, "a packet ('<' or '>'), a system call, a `command` or a %{ code }% block");
    return e;
  }

  // ---- packets ----
  PacketSpec packet() {
    PacketSpec p;
    p.inbound = take().is('<');
    if (cur().is('[')) ip_info(p);
    if (accept_word("icmp")) {
      icmp(p);
      return p;
    }
    if (cur().is_word("udp") || cur().is_word("gre") || cur().is_word("GREv0") ||
        cur().is_word("ipv4") || cur().is_word("ipv6") || cur().is_word("mpls"))
      fail(cur(), "a TCP packet or an ICMP error (UDP, GRE, MPLS and encapsulation are not supported)");
    flags(p);
    seq_range(p.seq_start, p.seq_end, p.len);
    for (;;) {
      if (accept_word("ack")) p.ack = u32("an ack number after 'ack'");
      else if (accept_word("win")) p.win = u32("a window after 'win'");
      else if (accept_word("urg")) p.urg = u32("an urgent pointer after 'urg'");
      else break;
    }
    if (accept('<')) tcp_options(p);
    return p;
  }

  void ip_info(PacketSpec& p) {
    expect('[', "'['");
    while (ok() && !cur().is(']')) {
      const Token& w = cur();
      if (w.kind != Token::Kind::kWord) fail(w, "an IP attribute (ect0, ect1, ce, tos, ttl, flowlabel)");
      advance();
      if (w.text == "ect0") p.ecn = Ecn::kEct0;
      else if (w.text == "ect1") p.ecn = Ecn::kEct1;
      else if (w.text == "ect01") p.ecn = Ecn::kEct01;
      else if (w.text == "ce") p.ecn = Ecn::kCe;
      else if (w.text == "noecn") p.ecn = Ecn::kNotEct;
      else if (w.text == "tos") p.tos = u32("a TOS value after 'tos'");
      else if (w.text == "ttl") p.ttl = u32("a TTL after 'ttl'");
      else if (w.text == "flowlabel") p.flowlabel = u32("a flow label after 'flowlabel'");
      else p.ip_unknown.push_back(w.text);
      accept(',');
    }
    advance();
  }

  void flags(PacketSpec& p) {
    // Flags are a run of adjacent word letters and '.', or '-' for none.
    const Token& first = cur();
    if (first.is('-')) {
      p.flags_text = "-";
      advance();
      return;
    }
    std::string text;
    bool adjacent = true;
    while (adjacent && (cur().kind == Token::Kind::kWord || cur().is('.'))) {
      text += cur().text;
      advance();
      adjacent = !cur().space_before;
    }
    if (text.empty()) fail(first, "TCP flags (a combination of F S R P . E W A U, or -)");
    for (char c : text) {
      switch (c) {
        case 'F': p.flags |= 0x01; break;
        case 'S': p.flags |= 0x02; break;
        case 'R': p.flags |= 0x04; break;
        case 'P': p.flags |= 0x08; break;
        case '.': p.flags |= 0x10; break;
        case 'U': p.flags |= 0x20; break;
        case 'E': p.flags |= 0x40; break;
        case 'W': p.flags |= 0x80; break;
        case 'A': p.flags |= 0x100; break;
        default: fail(first, "TCP flags (a combination of F S R P . E W A U, or -)");
      }
    }
    p.flags_text = text;
  }

  // start:end(len)
  void seq_range(uint32_t& start, uint32_t& end, uint32_t& len) {
    start = u32("a sequence range 'start:end(len)'");
    expect(':', "':' in the sequence range 'start:end(len)'");
    end = u32("the end of the sequence range 'start:end(len)'");
    expect('(', "'(' before the length in 'start:end(len)'");
    len = u32("the payload length in 'start:end(len)'");
    expect(')', "')' after the length in 'start:end(len)'");
  }

  void icmp(PacketSpec& p) {
    p.icmp = true;
    if (cur().kind != Token::Kind::kWord) fail(cur(), "an ICMP type (unreachable, packet_too_big, time_exceeded)");
    p.icmp_type = take().text;
    if (cur().kind == Token::Kind::kWord && !cur().is_word("mtu")) p.icmp_code = take().text;
    if (accept_word("mtu")) p.icmp_mtu = u32("an MTU after 'mtu'");
    if (accept('[')) {
      p.icmp_has_quote = true;
      if (cur().kind == Token::Kind::kWord || cur().is('.')) flags(p);
      seq_range(p.seq_start, p.seq_end, p.len);
      expect(']', "']' after the quoted segment");
    }
  }

  void tcp_options(PacketSpec& p) {
    p.options_given = true;
    if (cur().kind == Token::Kind::kEllipsis) {
      advance();
      p.options_any = true;
      expect('>', "'>' after '<...'");
      return;
    }
    if (accept('>')) return;
    while (ok()) {
      p.options.push_back(tcp_option());
      if (accept('>')) return;
      expect(',', "',' or '>' in the TCP option list");
      if (accept('>')) return;  // trailing comma
    }
  }

  OptionSpec tcp_option() {
    using K = OptionSpec::Kind;
    OptionSpec o;
    const Token& w = cur();
    if (w.kind != Token::Kind::kWord) fail(w, "a TCP option (nop, eol, mss, wscale, sackOK, sack, TS, FO, FOEXP, md5)");
    advance();
    if (w.text == "nop") o.kind = K::kNop;
    else if (w.text == "eol") o.kind = K::kEol;
    else if (w.text == "sackOK") o.kind = K::kSackOk;
    else if (w.text == "mss") { o.kind = K::kMss; o.a = u32("an MSS value after 'mss'"); }
    else if (w.text == "wscale") { o.kind = K::kWscale; o.a = u32("a shift count after 'wscale'"); }
    else if (w.text == "sack") {
      o.kind = K::kSack;
      while (cur().kind == Token::Kind::kInt) {
        uint32_t a = u32("a SACK block 'start:end'");
        expect(':', "':' in the SACK block 'start:end'");
        o.blocks.emplace_back(a, u32("the end of the SACK block 'start:end'"));
      }
    } else if (w.text == "TS") {
      o.kind = K::kTimestamp;
      if (!accept_word("val")) fail(cur(), "'val' after 'TS'");
      o.a = u32("a TS value after 'val'");
      if (!accept_word("ecr")) fail(cur(), "'ecr' after the TS value");
      o.b = u32("a TS echo reply after 'ecr'");
    } else if (w.text == "FO" || w.text == "FOEXP") {
      o.kind = w.text == "FO" ? K::kFastOpen : K::kFastOpenExp;
      if (cur().kind == Token::Kind::kWord || cur().kind == Token::Kind::kInt) o.text = take().text;
    } else if (w.text == "md5") {
      // packetdrill new_md5_option: up to 16 bytes of hex, sent as given.
      // The lexer may cut "0001...0a0b" into a number and a word: rejoin.
      o.kind = K::kMd5;
      while (!cur().is(',') && !cur().is('>') && cur().kind != Token::Kind::kEnd) o.text += take().text;
      const bool hex = o.text.size() % 2 == 0 && o.text.size() <= 32 &&
                       o.text.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
      if (!hex) fail(w, "an MD5 digest of at most 16 bytes in hex after 'md5'");
    } else {
      // mptcp, exp, numeric kinds: keep the words so the runner can say what it skipped.
      o.kind = K::kUnknown;
      o.text = w.text;
      while (!cur().is(',') && !cur().is('>') && cur().kind != Token::Kind::kEnd)
        o.text += " " + take().text;
    }
    return o;
  }

  // ---- system calls ----
  SyscallSpec syscall() {
    SyscallSpec s;
    s.name = take().text;
    expect('(', "'('");
    if (!accept(')')) {
      while (ok()) {
        s.args.push_back(expr());
        if (accept(')')) break;
        expect(',', "',' or ')' in the argument list");
      }
    }
    expect('=', fmt::format("'=' and the expected result of {}()", s.name));
    s.result = expr();
    // `-1 EAGAIN (Resource temporarily unavailable)`, `0x2 (flags O_RDWR)`:
    // the next event starts with a time, so a word here is the errno name.
    if (cur().kind == Token::Kind::kWord) s.errno_name = take().text;
    if (cur().is('(')) s.note = note();
    return s;
  }

  // Free text up to the matching ')'.
  std::string note() {
    advance();
    int depth = 1;
    std::string text;
    for (;;) {
      if (cur().kind == Token::Kind::kEnd) {
        fail(cur(), "')' closing the note");
        return text;
      }
      if (cur().is('(')) ++depth;
      if (cur().is(')') && --depth == 0) break;
      text += (text.empty() || !cur().space_before ? "" : " ") + cur().text;
      advance();
    }
    advance();
    return text;
  }

  Expr expr() {
    Expr first = primary();
    if (!cur().is('|')) return first;
    Expr e;
    e.kind = Expr::Kind::kOr;
    e.pos = first.pos;
    e.items.push_back(std::move(first));
    while (accept('|')) e.items.push_back(primary());
    return e;
  }

  std::vector<Expr> expr_list(char close, std::string_view what) {
    std::vector<Expr> out;
    if (accept(close)) return out;
    while (ok()) {
      out.push_back(expr());
      if (accept(close)) return out;
      expect(',', what);
      if (accept(close)) return out;
    }
    return out;  // after a failure
  }

  Expr primary() {
    Expr e;
    const Token& t = cur();
    e.pos = t.pos;
    e.text = t.text;
    switch (t.kind) {
      case Token::Kind::kInt: e.kind = Expr::Kind::kInt; e.num = t.num; advance(); return e;
      case Token::Kind::kString:
      case Token::Kind::kAddress: e.kind = Expr::Kind::kString; advance(); return e;
      case Token::Kind::kEllipsis: e.kind = Expr::Kind::kEllipsis; advance(); return e;
      case Token::Kind::kWord: return word_expr();
      default: break;
    }
    if (accept('[')) {
      e.kind = Expr::Kind::kList;
      e.items = expr_list(']', "',' or ']' in the list");
      return e;
    }
    if (accept('{')) {
      e.kind = Expr::Kind::kStruct;
      e.items = expr_list('}', "',' or '}' in the struct");
      return e;
    }
    if (t.is('-') && look(1).kind == Token::Kind::kWord) {  // -ENOENT style
      advance();
      Expr w = word_expr();
      w.text = "-" + w.text;
      return w;
    }
    fail(t, "a value (number, NAME, \"string\", ..., [list] or {struct})");
    return e;
  }

  // NAME, NAME(args), NAME=value, NAME(args)=value
  Expr word_expr() {
    Expr e;
    e.pos = cur().pos;
    e.text = take().text;
    e.kind = Expr::Kind::kWord;
    if (accept('(')) {
      e.kind = Expr::Kind::kCall;
      e.has_args = true;
      e.args = expr_list(')', "',' or ')' in the argument list");
    }
    if (accept('=')) {
      e.kind = Expr::Kind::kField;
      e.items.push_back(expr());
    }
    return e;
  }

  std::vector<Token> t_;
  size_t i_ = 0;
  const std::string& path_;
  ParseError err_;
  bool failed_ = false;
};

}  // namespace

Expected<Script, ParseError> parse_script(std::string_view text, const std::string& path,
                                          const std::map<std::string, std::string>& defines) {
  auto toks = lex(text, path, defines);
  if (!toks) return Unexpected{toks.error()};
  return Parser(std::move(*toks), path).parse();
}

Expected<Script, ParseError> parse_file(const std::string& path,
                                        const std::map<std::string, std::string>& defines) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Unexpected{ParseError{path, {0, 0}, "cannot read the file"}};
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_script(ss.str(), path, defines);
}

}  // namespace weir::pkt
