// `rm` and `dd` over the runner's files (src/pkt/shell_files.h).
#include <gtest/gtest.h>

#include "pkt/runner_impl.h"
#include "pkt/shell_files.h"

namespace weir::pkt {
namespace {

TEST(ShellFiles, DdMakesZerosOfBsTimesCountAndRmRemovesThem) {
  FileSystem fs;
  FileRun r = run_file_command(fs, {"/bin/dd", "bs=1K", "count=3", "if=/dev/zero", "of=/tmp/f", "status=none"});
  ASSERT_EQ(r.status, 0) << r.error << r.unsupported;
  EXPECT_EQ(fs.sizes.at("/tmp/f"), 3072u);
  r = run_file_command(fs, {"dd", "if=/dev/zero", "of=/tmp/f", "bs=1", "count=5"});  // of= truncates
  EXPECT_EQ(fs.sizes.at("/tmp/f"), 5u);
  r = run_file_command(fs, {"/bin/rm", "/tmp/f"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(fs.sizes.count("/tmp/f"), 0u);
}

TEST(ShellFiles, RmOfAMissingFileFailsUnlessForced) {
  FileSystem fs;
  FileRun r = run_file_command(fs, {"rm", "/tmp/none"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.error.find("No such file"), std::string::npos);
  EXPECT_EQ(run_file_command(fs, {"rm", "-f", "/tmp/none"}).status, 0);
}

TEST(ShellFiles, WhatCannotBeEmulatedSaysWhy) {
  FileSystem fs;
  EXPECT_NE(run_file_command(fs, {"dd", "if=/etc/passwd", "of=/tmp/x", "count=1"}).unsupported, "");
  EXPECT_NE(run_file_command(fs, {"dd", "if=/dev/zero", "of=/tmp/x", "count=1", "conv=notrunc"}).unsupported, "");
  EXPECT_NE(run_file_command(fs, {"rm", "-r", "/tmp"}).unsupported, "");
  EXPECT_EQ(run_file_command(fs, {"dd", "if=/dev/zero", "of=/tmp/x", "bs=x", "count=1"}).status, 1);
}

TEST(ShellFiles, FilesAreBounded) {
  FileSystem fs;
  FileRun r = run_file_command(fs, {"dd", "if=/dev/zero", "of=/tmp/big", "bs=1M", "count=65"});
  EXPECT_EQ(r.status, 1);  // over FileSystem::kMaxBytes (64 MiB)
  EXPECT_EQ(fs.sizes.count("/tmp/big"), 0u);
  for (size_t i = 0; i < FileSystem::kMaxFiles; ++i)
    ASSERT_EQ(run_file_command(fs, {"dd", "if=/dev/zero", "of=/tmp/" + std::to_string(i), "count=0"}).status, 0);
  EXPECT_EQ(run_file_command(fs, {"dd", "if=/dev/zero", "of=/tmp/one-more", "count=0"}).status, 1);
}

}  // namespace
}  // namespace weir::pkt
