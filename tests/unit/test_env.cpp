// The environment settings of util/env.h: a setting in range is taken, and anything else (unset,
// empty, not a number, trailing characters, out of range, past a long) gives the fallback.
#include <gtest/gtest.h>

#include <cstdlib>

#include "util/env.h"

namespace blurtool {
namespace {

constexpr const char* kName = "BLURTOOL_TEST_ENV_INT";

int with(const char* value) {
  ::setenv(kName, value, 1);
  const int v = env_int(kName, 2, 1024, 7);
  ::unsetenv(kName);
  return v;
}

TEST(EnvInt, TakesADecimalInRangeAndOtherwiseTheFallback) {
  ::unsetenv(kName);
  EXPECT_EQ(env_int(kName, 2, 1024, 7), 7);
  EXPECT_EQ(with("2"), 2);
  EXPECT_EQ(with("1024"), 1024);
  EXPECT_EQ(with("+64"), 64);
  EXPECT_EQ(with(""), 7);
  EXPECT_EQ(with("1"), 7);
  EXPECT_EQ(with("1025"), 7);
  EXPECT_EQ(with("-3"), 7);
  EXPECT_EQ(with("64k"), 7);
  EXPECT_EQ(with("sixty"), 7);
  EXPECT_EQ(with("99999999999999999999999"), 7);  // past a long: ERANGE, not LONG_MAX
}

}  // namespace
}  // namespace blurtool
