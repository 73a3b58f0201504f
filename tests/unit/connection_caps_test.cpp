// The daemon's caps on connections and on event streams: fitted to the open-files limit and to
// each other, never zero.
#include <gtest/gtest.h>

#include "server/http_server.hpp"

namespace kt {
namespace {

TEST(ConnectionCaps, ConnectionsFitTheOpenFilesLimitMinusTheReserve) {
  EXPECT_EQ(fit_connection_cap(512, 1 << 20), 512u);
  EXPECT_EQ(fit_connection_cap(512, 300), 300u - kReservedDescriptors);
  EXPECT_EQ(fit_connection_cap(512, 10), 1u);
}

TEST(ConnectionCaps, EventStreamsTakeAtMostHalfTheConnections) {
  EXPECT_EQ(fit_event_stream_cap(64, 512), 64u);
  EXPECT_EQ(fit_event_stream_cap(64, 100), 50u);
  EXPECT_EQ(fit_event_stream_cap(64, 1), 1u);
  EXPECT_EQ(fit_event_stream_cap(2, 512), 2u);
}

}  // namespace
}  // namespace kt
