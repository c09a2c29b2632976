// Subcommands register themselves here, one file each (cmd_<name>.cc), so
// adding a command never touches main.cc.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace weir::cli {

// Adds the subcommand to `app`; returns the function that runs it after
// parsing (its return value is the exit status).
using Setup = std::function<std::function<int()>(CLI::App& app)>;

struct Command {
  std::string name;
  Setup setup;
};

std::vector<Command>& registry();

struct Register {
  Register(std::string name, Setup setup) { registry().push_back({std::move(name), std::move(setup)}); }
};

}  // namespace weir::cli
