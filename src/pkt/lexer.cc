#include "pkt/lexer.h"

#include <cctype>
#include <charconv>

#include <fmt/format.h>

namespace weir::pkt {
namespace {

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& path,
        const std::map<std::string, std::string>& defines)
      : s_(text), path_(path), defines_(defines) {}

  Expected<std::vector<Token>, ParseError> run() {
    std::vector<Token> out;
    for (;;) {
      bool space = skip_space_and_comments();
      if (!err_.message.empty()) return Unexpected{err_};
      Token t;
      t.pos = pos();
      t.space_before = space;
      if (i_ >= s_.size()) {
        out.push_back(t);
        return out;
      }
      if (!next(t)) return Unexpected{err_};
      out.push_back(std::move(t));
    }
  }

 private:
  SourcePos pos() const { return {line_, col_}; }
  char peek(size_t k = 0) const { return i_ + k < s_.size() ? s_[i_ + k] : '\0'; }
  void bump(size_t n = 1) {
    for (size_t k = 0; k < n && i_ < s_.size(); ++k, ++i_) {
      if (s_[i_] == '\n') {
        ++line_;
        col_ = 1;
      } else {
        ++col_;
      }
    }
  }
  void fail(SourcePos p, std::string msg) { err_ = {path_, p, std::move(msg)}; }

  bool skip_space_and_comments() {
    bool any = false;
    for (;;) {
      char c = peek();
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        bump();
      } else if (c == '/' && peek(1) == '/') {
        while (i_ < s_.size() && peek() != '\n') bump();
      } else if (c == '/' && peek(1) == '*') {
        SourcePos start = pos();
        size_t end = s_.find("*/", i_ + 2);
        if (end == std::string_view::npos) {
          fail(start, "unterminated comment: expected '*/'");
          return any;
        }
        bump(end + 2 - i_);
      } else {
        return any;
      }
      any = true;
    }
  }

  // A quoted span (`"`, '`') up to the unescaped closing quote.
  bool quoted(Token& t, char q, Token::Kind kind) {
    size_t start = i_ + 1;
    size_t k = start;
    while (k < s_.size() && s_[k] != q) k += (s_[k] == '\\' && k + 1 < s_.size()) ? 2 : 1;
    if (k >= s_.size()) {
      fail(t.pos, fmt::format("unterminated {}: expected a closing {}",
                              q == '`' ? "shell command" : "string", q));
      return false;
    }
    t.kind = kind;
    t.text = std::string(s_.substr(start, k - start));
    bump(k + 1 - i_);
    return true;
  }

  bool code(Token& t) {
    size_t end = s_.find("}%", i_ + 2);
    if (end == std::string_view::npos) {
      fail(t.pos, "unterminated code block: expected '}%'");
      return false;
    }
    std::string_view body = s_.substr(i_ + 2, end - i_ - 2);
    while (!body.empty() && (body.front() == ' ' || body.front() == '\t')) body.remove_prefix(1);
    while (!body.empty() && (body.back() == ' ' || body.back() == '\t')) body.remove_suffix(1);
    t.kind = Token::Kind::kCode;
    t.text = std::string(body);
    bump(end + 2 - i_);
    return true;
  }

  // `--name` or `--name=value` (value up to whitespace, or a quoted string).
  void option(Token& t) {
    size_t k = i_ + 2;
    while (k < s_.size() && is_word_char(s_[k])) ++k;
    std::string text(s_.substr(i_ + 2, k - i_ - 2));
    if (k < s_.size() && s_[k] == '=') {
      ++k;
      size_t v = k;
      if (k < s_.size() && s_[k] == '"') {
        size_t e = s_.find('"', k + 1);
        k = e == std::string_view::npos ? s_.size() : e + 1;
        text += "=" + std::string(s_.substr(v + 1, k - v - 2));
      } else {
        while (k < s_.size() && !std::isspace(static_cast<unsigned char>(s_[k]))) ++k;
        text += "=" + std::string(s_.substr(v, k - v));
      }
    }
    t.kind = Token::Kind::kOption;
    t.text = std::move(text);
    bump(k - i_);
  }

  // Numbers, hex, floats, IPv4 addresses and words starting with a digit.
  bool number_or_word(Token& t) {
    size_t k = i_;
    const bool neg = peek() == '-';
    if (neg) ++k;
    const size_t digits = k;
    while (k < s_.size() && is_digit(s_[k])) ++k;
    if (!neg && k > digits && address(t, k)) return true;
    if (k < s_.size() && s_[k] == '.' && k + 1 < s_.size() && is_digit(s_[k + 1])) {
      float_number(t, k);
      return true;
    }
    return word_run(t, neg, k);
  }

  // An IPv4 address d.d.d.d whose first digits end at `k`; false (nothing
  // consumed) when the digits are not one.
  bool address(Token& t, size_t k) {
    size_t m = k;
    int dots = 0;
    while (dots < 3 && m + 1 < s_.size() && s_[m] == '.' && is_digit(s_[m + 1])) {
      ++m;
      while (m < s_.size() && is_digit(s_[m])) ++m;
      ++dots;
    }
    if (dots != 3) return false;
    t.kind = Token::Kind::kAddress;
    t.text = std::string(s_.substr(i_, m - i_));
    bump(m - i_);
    return true;
  }

  // [-]digits.digits, the '.' at `k`.
  void float_number(Token& t, size_t k) {
    ++k;
    while (k < s_.size() && is_digit(s_[k])) ++k;
    t.kind = Token::Kind::kFloat;
    t.text = std::string(s_.substr(i_, k - i_));
    t.real = std::strtod(t.text.c_str(), nullptr);
    bump(k - i_);
  }

  // A word run ([A-Za-z0-9_]+) from the cursor (after a '-' at `k` when
  // `neg`): hex, decimal or a word such as a cookie. A '-' before a word is
  // punctuation on its own.
  bool word_run(Token& t, bool neg, size_t k) {
    size_t w = neg ? k : i_;
    while (w < s_.size() && is_word_char(s_[w])) ++w;
    const size_t from = neg ? i_ + 1 : i_;
    std::string_view run = s_.substr(from, w - from);
    const bool hex = run.size() > 2 && run[0] == '0' && (run[1] == 'x' || run[1] == 'X') &&
                     run.find_first_not_of("0123456789abcdefABCDEF", 2) == std::string_view::npos;
    if (hex || run.find_first_not_of("0123456789") == std::string_view::npos) {
      uint64_t v = 0;
      auto [p, ec] = hex ? std::from_chars(run.data() + 2, run.data() + run.size(), v, 16)
                         : std::from_chars(run.data(), run.data() + run.size(), v);
      if (ec != std::errc()) {
        fail(t.pos, fmt::format("{} '{}' is too large", hex ? "hex number" : "number", run));
        return false;
      }
      t.kind = Token::Kind::kInt;
      t.num = neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
    } else if (neg) {
      t.kind = Token::Kind::kPunct;
      t.punct = '-';
      t.text = "-";
      bump();
      return true;
    } else {
      t.kind = Token::Kind::kWord;
    }
    t.text = std::string(s_.substr(i_, w - i_));
    bump(w - i_);
    return true;
  }

  void word(Token& t) {
    size_t k = i_;
    while (k < s_.size() && is_word_char(s_[k])) ++k;
    t.kind = Token::Kind::kWord;
    t.text = std::string(s_.substr(i_, k - i_));
    bump(k - i_);
    auto d = defines_.find(t.text);
    if (d == defines_.end()) return;
    // -D NAME=VALUE: the value stands in for the word.
    const std::string& v = d->second;
    int64_t n = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec == std::errc() && p == v.data() + v.size()) {
      t.kind = Token::Kind::kInt;
      t.num = n;
    }
    t.text = v;
  }

  bool next(Token& t) {
    char c = peek();
    if (c == '"') return quoted(t, '"', Token::Kind::kString);
    if (c == '`') return quoted(t, '`', Token::Kind::kBackquote);
    if (c == '%' && peek(1) == '{') return code(t);
    if (c == '.' && peek(1) == '.' && peek(2) == '.') {
      t.kind = Token::Kind::kEllipsis;
      t.text = "...";
      bump(3);
      return true;
    }
    if (c == '-' && peek(1) == '-' && std::isalpha(static_cast<unsigned char>(peek(2)))) {
      option(t);
      return true;
    }
    if (is_digit(c) || (c == '-' && is_digit(peek(1))) || (c == '.' && is_digit(peek(1))) ||
        (c == '-' && peek(1) == '.' && is_digit(peek(2))))
      return number_or_word(t);
    if (is_word_char(c)) {
      word(t);
      return true;
    }
    t.kind = Token::Kind::kPunct;
    t.punct = c;
    t.text = std::string(1, c);
    bump();
    return true;
  }

  std::string_view s_;
  const std::string& path_;
  const std::map<std::string, std::string>& defines_;
  size_t i_ = 0;
  int line_ = 1;
  int col_ = 1;
  ParseError err_;
};

}  // namespace

const char* describe(Token::Kind k) {
  switch (k) {
    case Token::Kind::kEnd: return "end of file";
    case Token::Kind::kWord: return "word";
    case Token::Kind::kInt: return "integer";
    case Token::Kind::kFloat: return "number";
    case Token::Kind::kString: return "string";
    case Token::Kind::kBackquote: return "shell command";
    case Token::Kind::kCode: return "code block";
    case Token::Kind::kOption: return "option";
    case Token::Kind::kEllipsis: return "'...'";
    case Token::Kind::kAddress: return "address";
    case Token::Kind::kPunct: return "punctuation";
  }
  return "token";
}

std::string describe(const Token& t) {
  switch (t.kind) {
    case Token::Kind::kEnd:
    case Token::Kind::kEllipsis:
    case Token::Kind::kCode:
    case Token::Kind::kBackquote: return describe(t.kind);
    case Token::Kind::kPunct: return fmt::format("'{}'", t.punct);
    default: return fmt::format("{} '{}'", describe(t.kind), t.text);
  }
}

std::string ParseError::to_string() const {
  return fmt::format("{}:{}:{}: {}", path, pos.line, pos.column, message);
}

Expected<std::vector<Token>, ParseError> lex(std::string_view text, const std::string& path,
                                             const std::map<std::string, std::string>& defines) {
  return Lexer(text, path, defines).run();
}

}  // namespace weir::pkt
