// Tokens of the packetdrill language, with their line and column. The
// rules follow packetdrill's lexer: words are [A-Za-z0-9_]+ (all digits is
// an integer), `0x..` is a hex integer, `[-]?[0-9]*.[0-9]+` a float, `...`
// an ellipsis, `--name[=value]` an option line, and quoted, back-quoted and
// %{ }% spans keep their text. `//` and `/* */` are comments.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "pkt/ast.h"
#include "weir/expected.h"

namespace weir::pkt {

struct Token {
  enum class Kind { kEnd, kWord, kInt, kFloat, kString, kBackquote, kCode, kOption, kEllipsis,
                    kAddress, kPunct };
  Kind kind = Kind::kEnd;
  std::string text;  // the value: word, digits, string body, option "name=value"
  int64_t num = 0;   // kInt (decimal or hex)
  double real = 0;   // kFloat
  char punct = 0;    // kPunct
  SourcePos pos;
  bool space_before = false;  // whitespace or a comment precedes it

  bool is(char c) const { return kind == Kind::kPunct && punct == c; }
  bool is_word(std::string_view w) const { return kind == Kind::kWord && text == w; }
};

const char* describe(Token::Kind k);
std::string describe(const Token& t);  // "word 'ack'", "'<'", "end of file"

// Splits `text` into tokens. Words named in `defines` (-D NAME=VALUE) are
// replaced by their value, as packetdrill substitutes them.
Expected<std::vector<Token>, ParseError> lex(std::string_view text, const std::string& path,
                                             const std::map<std::string, std::string>& defines);

}  // namespace weir::pkt
