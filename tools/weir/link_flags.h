// The device and stack flags `weir serve` and `weir fetch` share.
#pragma once

#include <memory>

#include <CLI/CLI.hpp>

#include "driver/run.h"

namespace weir::cli {

// --tun | --packet | --tap, --addr, --peer, --netns, --mac, --gateway,
// --sysctl, --no-offload, --io-uring; `s` must outlive the parse.
void add_link_flags(CLI::App& app, const std::shared_ptr<driver::StackSetup>& s);

}  // namespace weir::cli
