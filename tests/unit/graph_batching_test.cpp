#include "worker/graph_batching.hpp"

#include <limits>

#include <gtest/gtest.h>

namespace kt {
namespace {

TEST(GraphBatching, LongKernelsAreTimedOneLaunchAtATime) {
  const TimingOptions options;  // graph below 10 us, graphs of >= 50 us
  EXPECT_EQ(launches_per_graph(10.0, options), 1);
  EXPECT_EQ(launches_per_graph(250.0, options), 1);
}

TEST(GraphBatching, ShortKernelsFillAGraphOfAtLeastTheBatchTime) {
  const TimingOptions options;
  EXPECT_EQ(launches_per_graph(5.0, options), 10);  // 10 x 5 us = 50 us
  EXPECT_EQ(launches_per_graph(3.0, options), 17);  // ceil(50 / 3)
  EXPECT_EQ(launches_per_graph(9.99, options), 6);  // ceil(5.005)
  EXPECT_GE(launches_per_graph(2.2, options) * 2.2, options.graph_batch_us);
}

TEST(GraphBatching, EstimatesBelowTheEventResolutionAreCapped) {
  const TimingOptions options;
  EXPECT_EQ(launches_per_graph(0.0, options), 100);  // counted as 0.5 us
  TimingOptions big_batch = options;
  big_batch.graph_batch_us = 1e6;
  EXPECT_EQ(launches_per_graph(1.0, big_batch), kMaxLaunchesPerGraph);
  TimingOptions tiny_batch = options;
  tiny_batch.graph_batch_us = 1;
  EXPECT_EQ(launches_per_graph(5.0, tiny_batch), 2);  // a graph of one launch gains nothing
}

TEST(GraphBatching, CanBeSwitchedOffAndIgnoresNonsense) {
  TimingOptions off;
  off.graph_below_us = 0;
  EXPECT_EQ(launches_per_graph(1.0, off), 1);
  const TimingOptions options;
  EXPECT_EQ(launches_per_graph(-1.0, options), 1);
  EXPECT_EQ(launches_per_graph(std::numeric_limits<double>::quiet_NaN(), options), 1);
}

}  // namespace
}  // namespace kt
