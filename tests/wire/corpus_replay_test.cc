// Replays the libFuzzer seed corpus (fuzz/corpus/wire) through the fuzz
// target's checks in every build, so the corpus and the invariants stay live
// even where no fuzz build exists.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "../../fuzz/wire_fuzz_check.h"

namespace weir::wire {
namespace {

TEST(WireCorpus, EverySeedPassesTheFuzzChecks) {
  std::filesystem::path dir = WEIR_SOURCE_DIR "/fuzz/corpus/wire";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  size_t files = 0, named = 0, named_accepted = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    SCOPED_TRACE(entry.path().string());
    const bool accepted = fuzz::check_wire_input(data) > 0;  // aborts on a broken invariant
    ++files;
    // Inputs libFuzzer merged in are named by their SHA-1 and mostly reach
    // error paths; the hand-written seeds have descriptive names.
    if (entry.path().filename().string().size() != 40) {
      ++named;
      named_accepted += accepted ? 1 : 0;
    }
  }
  EXPECT_GE(files, 8u);
  // The hand-written seeds are mostly valid packets, so the replay reaches deep code.
  EXPECT_GE(named, 8u);
  EXPECT_GE(named_accepted, named / 2);
}

}  // namespace
}  // namespace weir::wire
