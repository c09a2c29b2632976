// `rm` and `dd` over the runner's files (runner_impl.h FileSystem): what a
// script's shell lines do to make a file for open() and sendfile()
// (gtests sendfile/), emulated so that the run never touches the host.
#pragma once

#include <string>
#include <vector>

namespace weir::pkt {

struct FileSystem;

struct FileRun {
  int status = 0;           // the command's exit status
  std::string error;        // why it failed (status != 0)
  std::string unsupported;  // non-empty: the command cannot be emulated, and why
};

// `rm [-f] PATH...` and `dd if=/dev/zero of=PATH bs=N count=M [status=none]`
// (bs with an optional K, M or G suffix). `words[0]` may carry a directory.
FileRun run_file_command(FileSystem& fs, const std::vector<std::string>& words);

// True when `prog` (with or without a directory) is one run_file_command knows.
bool is_file_command(const std::string& prog);

}  // namespace weir::pkt
