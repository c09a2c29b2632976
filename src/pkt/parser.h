// Parses a packetdrill script into a Script. Errors say where
// (file:line:column) and what was expected there.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "pkt/ast.h"
#include "weir/expected.h"

namespace weir::pkt {

Expected<Script, ParseError> parse_script(std::string_view text, const std::string& path,
                                          const std::map<std::string, std::string>& defines = {});

// Reads and parses a file; a file that cannot be read is a ParseError at 0:0.
Expected<Script, ParseError> parse_file(const std::string& path,
                                        const std::map<std::string, std::string>& defines = {});

}  // namespace weir::pkt
