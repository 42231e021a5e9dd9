#include "tools/tract/CommandLine.h"

#include <gtest/gtest.h>

#include <vector>

using namespace mlir::tract;

namespace {

std::optional<cli::Invocation> parse(std::vector<llvm::StringRef> args,
                                     std::string &error) {
  llvm::Expected<cli::Invocation> invocation = cli::parse(args);
  if (invocation)
    return std::move(*invocation);
  error = llvm::toString(invocation.takeError());
  return std::nullopt;
}

TEST(TractCommandLine, DumpIsTheDefaultSubcommand) {
  std::string error;
  auto invocation = parse({"model.onnx"}, error);
  ASSERT_TRUE(invocation) << error;
  EXPECT_EQ(invocation->model, "model.onnx");
  EXPECT_EQ(invocation->subcommand, "dump");
  EXPECT_FALSE(invocation->optimize);
}

TEST(TractCommandLine, GlobalOptionsBeforeTheModel) {
  std::string error;
  auto invocation =
      parse({"-i", "1,S,64,f32", "--set=S=3", "--set", "P=2", "-O", "--assert",
             "S>=1", "--scenario", "tg", "--assert=tg: S==1",
             "--nnef-tract-core", "--pulse", "S=8", "model", "run"},
            error);
  ASSERT_TRUE(invocation) << error;
  EXPECT_EQ(invocation->inputFacts, std::vector<std::string>{"1,S,64,f32"});
  EXPECT_EQ(invocation->sets, (std::vector<std::string>{"S=3", "P=2"}));
  EXPECT_EQ(invocation->assertions,
            (std::vector<std::string>{"S>=1", "tg: S==1"}));
  EXPECT_EQ(invocation->scenarios, std::vector<std::string>{"tg"});
  EXPECT_EQ(invocation->pulse, "S=8");
  EXPECT_TRUE(invocation->optimize);
  EXPECT_EQ(invocation->subcommand, "run");
}

TEST(TractCommandLine, DumpOptionsAfterTheModel) {
  std::string error;
  auto invocation = parse({"model.mlir", "dump", "--mlir", "-q"}, error);
  ASSERT_TRUE(invocation) << error;
  EXPECT_TRUE(invocation->dumpMlir);
  EXPECT_TRUE(invocation->quiet);
  // Without a subcommand, options after the model are dump's.
  invocation = parse({"model.mlir", "--mlir"}, error);
  ASSERT_TRUE(invocation) << error;
  EXPECT_TRUE(invocation->dumpMlir);
}

TEST(TractCommandLine, DumpProfileTakesBenchOptions) {
  std::string error;
  auto invocation =
      parse({"model.onnx", "--cost", "--profile", "--json", "--max-time", "50",
             "--warmup-loops=3", "--input-from-bundle", "io.npz"},
            error);
  ASSERT_TRUE(invocation) << error;
  EXPECT_TRUE(invocation->dumpCost);
  EXPECT_TRUE(invocation->dumpProfile);
  EXPECT_TRUE(invocation->dumpJson);
  EXPECT_EQ(invocation->maxTimeMs, 50);
  EXPECT_EQ(invocation->warmupLoops, 3);
  EXPECT_EQ(invocation->inputBundle, "io.npz");
  EXPECT_FALSE(parse({"model", "bench", "--profile"}, error));
  EXPECT_EQ(error, "option '--profile' does not apply to 'bench'");
}

TEST(TractCommandLine, UnknownOptionGetsAHint) {
  std::string error;
  EXPECT_FALSE(parse({"--sett", "S=3", "model"}, error));
  EXPECT_EQ(error, "unknown option '--sett'; did you mean '--set'?");
  EXPECT_FALSE(parse({"model", "dump", "--mlri"}, error));
  EXPECT_EQ(error, "unknown option '--mlri' for 'dump'; did you mean "
                   "'--mlir'?");
  EXPECT_FALSE(parse({"--frobnicate", "model"}, error));
  EXPECT_EQ(error, "unknown option '--frobnicate'; see 'tract --help'");
}

TEST(TractCommandLine, ReportsMisuse) {
  std::string error;
  EXPECT_FALSE(parse({}, error));
  EXPECT_EQ(error, "no model given; see 'tract --help'");
  EXPECT_FALSE(parse({"--set"}, error));
  EXPECT_EQ(error, "option '--set' expects a value");
  EXPECT_FALSE(parse({"model", "frob"}, error));
  EXPECT_EQ(error,
            "unknown subcommand 'frob'; expected one of dump, run, bench, "
            "compare, compile, llm-bench");
  EXPECT_FALSE(parse({"model", "run", "--mlir"}, error));
  EXPECT_EQ(error, "option '--mlir' does not apply to 'run'");
  EXPECT_FALSE(parse({"-O=1", "model"}, error));
  EXPECT_EQ(error, "option '-O' takes no value");
}

TEST(TractCommandLine, TractHarnessOptions) {
  std::string error;
  auto invocation = parse(
      {"--nnef-tract-core", ".", "-t", "set_symbols(values:{\"S\":1})",
       "--input-facts-from-bundle", "io.npz", "--no-nnef-tract-core", "-O",
       "run", "--assert-op-count", "Scan", "1", "--assert-op-count",
       "GatherElements", "2", "--assert-output", "y:1,f32=0"},
      error);
  ASSERT_TRUE(invocation) << error;
  EXPECT_EQ(invocation->model, ".");
  EXPECT_EQ(invocation->transforms,
            std::vector<std::string>{"set_symbols(values:{\"S\":1})"});
  EXPECT_EQ(invocation->inputFactsBundle, "io.npz");
  EXPECT_EQ(invocation->opCounts,
            (std::vector<std::pair<std::string, int64_t>>{
                {"Scan", 1}, {"GatherElements", 2}}));
  EXPECT_EQ(invocation->outputFacts, std::vector<std::string>{"y:1,f32=0"});

  invocation = parse({".", "--pulse", "4", "compare", "--stream",
                      "--allow-random-input", "--stage", "declutter", "-q"},
                     error);
  ASSERT_TRUE(invocation) << error;
  EXPECT_EQ(invocation->subcommand, "compare");
  EXPECT_TRUE(invocation->stream);
  EXPECT_EQ(invocation->compareStage, "declutter");
  EXPECT_TRUE(invocation->quiet);
  EXPECT_FALSE(invocation->approx);

  EXPECT_FALSE(parse({".", "dump", "--assert-op-count", "Scan"}, error));
  EXPECT_EQ(error, "option '--assert-op-count' expects an op name and a "
                   "non-negative count: --assert-op-count Scan 1");
  EXPECT_FALSE(parse({".", "dump", "--pulse", "4"}, error));
  EXPECT_EQ(error, "'--pulse' is a global option: give it before 'dump'");
}

TEST(TractCommandLine, HelpAndVersionNeedNoModel) {
  std::string error;
  auto invocation = parse({"--help"}, error);
  ASSERT_TRUE(invocation) << error;
  EXPECT_TRUE(invocation->help);
  invocation = parse({"-V"}, error);
  ASSERT_TRUE(invocation) << error;
  EXPECT_TRUE(invocation->version);
  EXPECT_NE(cli::usage().find("--set VALUE"), std::string::npos);
}

} // namespace
