#include "bench/engine_report.hpp"

#include <gtest/gtest.h>

namespace kt::bench {
namespace {

JobRun sweep_run(const std::string& pipeline, double vpm, double idle) {
  JobRun run;
  run.seconds = 70;
  run.job = {
      {"id", pipeline == "serial" ? 1 : 2},
      {"status", "done"},
      {"pipeline", pipeline},
      {"gpus", 1},
      {"progress",
       {{"total", 100}, {"finished", 100}, {"by_status", {{"pruned", 76}, {"measured", 24}}}}},
      {"stats",
       {{"wall_seconds", 60.0},
        {"variants_finished", 24},
        {"variants_measured", 24},
        {"variants_per_minute", vpm},
        {"compile_seconds_median", 2.5},
        {"gpu_idle_fraction", idle}}}};
  return run;
}

EngineReport sample_report() {
  EngineReport report;
  report.device = "NVIDIA H100 80GB HBM3";
  report.driver = "580.159.04";
  report.date = "2026-11-23";
  SpreadFigure spread;
  spread.shape = {4096, 4096, 4096};
  spread.config = {{"template", "wgmma_ws"}, {"BM", 128}};
  spread.medians_us = {160.0, 160.4, 159.9, 160.2};
  spread.job_ids = {3, 4, 5, 6};
  spread.spread = run_to_run_spread(spread.medians_us);
  report.spread = spread;
  RepeatFigure repeat;
  repeat.shape = {2048, 2048, 2048};
  repeat.budget = 24;
  repeat.job_a = 7;
  repeat.job_b = 8;
  repeat.winner_a = {{"template", "t"}, {"BM", 128}};
  repeat.winner_b = {{"template", "t"}, {"BM", 64}};
  repeat.winner_a_us = 40;
  repeat.winner_b_us = 39.8;
  repeat.comparison_a = {{"distinguishable", false}, {"margin", 0.004}};
  repeat.agreement =
      compare_winners({"a", 40, {{"a", 40}, {"b", 40.3}}}, {"b", 39.8, {{"a", 39.9}, {"b", 39.8}}});
  report.repeat = repeat;
  for (auto [pipeline, vpm, idle] :
       {std::tuple{"serial", 20.0, 0.9}, std::tuple{"pipelined", 90.0, 0.2}}) {
    SweepFigure s =
        sweep_from_job(pipeline, {2048, 2048, 2048}, 24, sweep_run(pipeline, vpm, idle));
    s.variant_keys = {"t|BM=128", "t|BM=64"};
    s.fresh_daemon = true;
    report.sweeps.push_back(s);
  }
  return report;
}

TEST(EngineReport, SweepFiguresComeFromTheJobStats) {
  const SweepFigure s =
      sweep_from_job("serial", {2048, 2048, 2048}, 24, sweep_run("serial", 20, 0.9));
  EXPECT_EQ(s.job_id, 1);
  EXPECT_EQ(s.variants_finished, 24);
  EXPECT_EQ(s.variants_per_minute_source, "job stats");
  EXPECT_DOUBLE_EQ(*s.variants_per_minute, 20);
  EXPECT_DOUBLE_EQ(*s.compile_seconds_median, 2.5);
  EXPECT_DOUBLE_EQ(*s.gpu_idle_fraction, 0.9);
  EXPECT_EQ(*s.gpus, 1);
  EXPECT_TRUE(s.note.empty());
}

TEST(EngineReport, SweepWithoutStatsFallsBackToTheBenchClock) {
  JobRun run = sweep_run("pipelined", 0, 0);
  run.job.erase("stats");
  run.job["status"] = "failed";
  run.job["reason"] = "worker died";
  const SweepFigure s = sweep_from_job("pipelined", {1, 2, 3}, 24, run);
  EXPECT_EQ(s.variants_per_minute_source, "bench wall clock");
  EXPECT_DOUBLE_EQ(*s.variants_per_minute, 24.0 / (70.0 / 60));
  EXPECT_FALSE(s.compile_seconds_median);
  EXPECT_EQ(s.note, "job failed: worker died");
}

TEST(EngineReport, SpeedupAndSameVariants) {
  EngineReport report = sample_report();
  EXPECT_DOUBLE_EQ(*pipelined_speedup(report), 4.5);
  EXPECT_EQ(sweeps_ran_same_variants(report), true);
  report.sweeps[1].variant_keys = {"t|BM=128"};
  EXPECT_EQ(sweeps_ran_same_variants(report), false);
  report.sweeps.pop_back();
  EXPECT_FALSE(pipelined_speedup(report));
  EXPECT_FALSE(sweeps_ran_same_variants(report));
}

TEST(EngineReport, JsonCarriesEveryFigure) {
  const nlohmann::json j = engine_report_to_json(sample_report());
  EXPECT_EQ(j.at("device"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(j.at("spread").at("runs"), 4);
  EXPECT_NEAR(j.at("spread").at("median_of_medians_us").get<double>(), 160.1, 1e-9);
  EXPECT_NEAR(j.at("spread").at("spread").get<double>(), 0.5 / 160.1, 1e-9);
  EXPECT_EQ(j.at("spread").at("target_met"), true);
  EXPECT_EQ(j.at("repeat").at("same_winner"), false);
  EXPECT_EQ(j.at("repeat").at("within_2_percent"), true);
  EXPECT_EQ(j.at("sweeps").size(), 2u);
  EXPECT_EQ(j.at("sweeps")[1].at("pipeline"), "pipelined");
  EXPECT_DOUBLE_EQ(j.at("pipelined_speedup").get<double>(), 4.5);
  EXPECT_EQ(j.at("sweeps_same_variants"), true);
}

TEST(EngineReport, TableNamesTheFigures) {
  const std::string table = render_engine_table(sample_report());
  EXPECT_NE(table.find("NVIDIA H100 80GB HBM3 (driver 580.159.04), 2026-11-23"), std::string::npos);
  EXPECT_NE(table.find("| 4 | 160.1 µs | 159.9 µs | 160.4 µs | 0.3% | met |"), std::string::npos)
      << table;
  EXPECT_NE(table.find("Different winners."), std::string::npos);
  EXPECT_NE(table.find("Within 2%: yes."), std::string::npos);
  EXPECT_NE(table.find("| no (margin 0.4%) |"), std::string::npos) << table;
  EXPECT_NE(table.find("| serial | 1 | 24 | 24 | 20.0 | 2.50 s | 90% | 60.0 s | 1 |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("Pipelined / serial variants per minute: 4.50×."), std::string::npos);
  EXPECT_NE(table.find("Same variants in both sweeps: yes."), std::string::npos);
}

}  // namespace
}  // namespace kt::bench
