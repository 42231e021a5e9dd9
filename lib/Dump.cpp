//===- Dump.cpp - the listing of `tract dump` -----------------------------===//

#include "lib/Dump.h"

#include "dialects/tract/TractCost.h"
#include "dialects/tract/TractQuant.h"
#include "dialects/tract/TractShapes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>

using namespace mlir;
using namespace mlir::tract;
namespace json = llvm::json;

namespace {

/// tract's spelling of an element type: F32, I64, U8, Bool.
std::string dtypeName(Type type) {
  if (auto quantized = getQuantizedElement(type))
    return quantizedTypeName(quantized);
  if (type.isInteger(1))
    return "Bool";
  if (auto integer = dyn_cast<IntegerType>(type))
    return (integer.isUnsigned() ? "U" : "I") +
           std::to_string(integer.getWidth());
  if (type.isBF16())
    return "BF16";
  if (auto floating = dyn_cast<FloatType>(type))
    return "F" + std::to_string(floating.getWidth());
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

/// A value's fact as tract prints it: `1,S,64,F32`.
std::string factString(Type type) {
  if (!isTractTensorType(type))
    return dtypeName(type);
  Shape shape = getShape(type);
  std::string text = shapeToString(shape);
  return text + (shape.empty() ? "" : ",") +
         dtypeName(cast<RankedTensorType>(type).getElementType());
}

/// One line of the listing: an input (Source) or an op.
struct Node {
  unsigned id;
  std::string op;
  std::string name;
  SmallVector<Type> outputs;
  std::optional<OpCost> cost;
  std::optional<double> ms; ///< with --profile, for ops
  double kernels = 0;       ///< GPU kernels per run, with --profile
  std::optional<OpPlacement> placement = std::nullopt; ///< with --gpu
};

struct Listing {
  std::vector<Node> nodes;
  OpCost totalCost{TDim(0), TDim(0)};
  double totalMs = 0;
};

Listing listModel(func::FuncOp entry, const lib::DumpOptions &options) {
  Listing listing;
  unsigned id = 0;
  for (BlockArgument argument : entry.getArguments()) {
    auto name = entry.getArgAttrOfType<StringAttr>(argument.getArgNumber(),
                                                   "tract.name");
    listing.nodes.push_back(
        {id++,
         "Source",
         name ? name.str() : "input_" + std::to_string(argument.getArgNumber()),
         {argument.getType()},
         std::nullopt,
         std::nullopt});
  }
  size_t slot = 0;
  for (Operation &op : entry.getBody().front().without_terminator()) {
    Node node{id++,
              op.getName().stripDialect().str(),
              lib::nodeName(op.getLoc()),
              SmallVector<Type>(op.getResultTypes()),
              std::nullopt,
              std::nullopt};
    if (options.cost || options.profile) {
      node.cost = getOpCost(&op);
      if (node.cost)
        listing.totalCost += *node.cost;
    }
    if (options.placements && slot < options.placements->size())
      node.placement = (*options.placements)[slot];
    if (options.profile && slot < options.profile->opMs.size()) {
      node.ms = options.profile->opMs[slot];
      listing.totalMs += *node.ms;
      if (slot < options.profile->opKernels.size())
        node.kernels = options.profile->opKernels[slot];
    }
    ++slot;
    listing.nodes.push_back(std::move(node));
  }
  return listing;
}

/// GF/s of `flops` (evaluated at the profile's symbols) done in `ms`.
std::optional<double> gigaflopsPerSecond(const TDim &flops, double ms,
                                         const lib::ModelProfile &profile) {
  std::optional<int64_t> count = flops.eval(profile.symbols);
  if (!count || *count == 0 || ms <= 0)
    return std::nullopt;
  return static_cast<double>(*count) / (ms * 1e6);
}

double percentOf(double part, double whole) {
  return whole > 0 ? 100.0 * part / whole : 0.0;
}

void printText(const Listing &listing, const lib::DumpOptions &options,
               llvm::raw_ostream &os) {
  const lib::ModelProfile *profile = options.profile;
  for (const Node &node : listing.nodes) {
    os << node.id << " " << node.op << " " << node.name << "\n";
    for (Type type : node.outputs)
      os << "    \u2014 " << factString(type) << "\n";
    // Constants are compiled in: no cost to show.
    if (options.cost && node.cost && node.op != "const")
      os << "    cost: " << node.cost->flops.toString() << " flops, "
         << node.cost->bytes.toString() << " bytes\n";
    else if (options.cost && node.op != "Source" && !node.cost)
      os << "    cost: unknown\n";
    if (node.placement && node.placement->kernels > 0)
      os << "    gpu: " << node.placement->kernels << " kernel"
         << (node.placement->kernels == 1 ? "" : "s")
         << (node.placement->onCpu ? ", and work on the CPU" : "") << "\n";
    else if (node.placement && node.placement->onCpu)
      os << "    cpu\n";
    if (profile && node.ms) {
      os << "    profile: " << llvm::format("%.4f", *node.ms) << " ms/i, "
         << llvm::format("%.1f", percentOf(*node.ms, listing.totalMs)) << "%";
      if (node.cost)
        if (auto rate =
                gigaflopsPerSecond(node.cost->flops, *node.ms, *profile))
          os << ", " << llvm::format("%.2f", *rate) << " GF/s";
      // What ran on the GPU (--gpu): its kernels per run.
      if (node.kernels > 0)
        os << ", " << llvm::format("%g", node.kernels) << " GPU kernel"
           << (node.kernels == 1 ? "" : "s");
      os << "\n";
    }
  }
  if (options.cost)
    os << "cost: " << listing.totalCost.flops.toString() << " flops, "
       << listing.totalCost.bytes.toString() << " bytes in total\n";
  if (options.placements) {
    int64_t ops = 0, onGpu = 0, onCpu = 0, kernels = 0;
    for (const Node &node : listing.nodes) {
      if (!node.placement)
        continue;
      ++ops;
      onGpu += node.placement->kernels > 0;
      onCpu += node.placement->onCpu;
      kernels += node.placement->kernels;
    }
    os << "gpu: " << onGpu << " of " << ops << " ops run " << kernels
       << " kernel" << (kernels == 1 ? "" : "s") << " on " << options.gpu
       << ", " << onCpu << " work on the CPU; the others have no tensor "
       << "work of their own (constants, shapes, fused into a consumer)\n";
  }
  if (profile) {
    size_t ops = profile->opMs.size();
    os << "profile: " << llvm::format("%.4f", listing.totalMs)
       << " ms/i in total for the " << ops
       << " ops; bench: " << llvm::format("%.4f", profile->benchMs)
       << " ms/i (the sum is "
       << llvm::format("%.1f", percentOf(listing.totalMs, profile->benchMs))
       << "% of it)\n";
    os << "profile: " << profile->runs << " instrumented and "
       << profile->benchRuns << " plain runs; each op's time excludes "
       << llvm::format("%.0f", profile->instrumentationNs)
       << " ns of instrumentation (what an empty enter/exit pair measures); "
          "scan and if bodies count in their op\n";
    if (const auto &copies = profile->transfers) {
      auto megabytes = [](double bytes) {
        return llvm::format("%.3g MB", bytes / 1e6);
      };
      os << "profile: GPU copies per run: "
         << llvm::format("%g", copies->uploads) << " uploads ("
         << megabytes(copies->uploadBytes) << "), "
         << llvm::format("%g", copies->downloads) << " downloads ("
         << megabytes(copies->downloadBytes) << "); weights: "
         << copies->weights << " uploads (" << megabytes(copies->weightBytes)
         << ") since the process started, "
         << copies->weightsAfterWarmUp << " after the warm-up runs\n";
    }
  }
}

/// A dim or a cost: a number when constant, else its expression.
json::Value dimValue(const TDim &dim) {
  if (std::optional<int64_t> constant = dim.getConstant())
    return *constant;
  return dim.toString();
}

void writeCost(json::OStream &out, const OpCost &cost) {
  out.attributeObject("cost", [&] {
    out.attribute("flops", dimValue(cost.flops));
    out.attribute("bytes", dimValue(cost.bytes));
  });
}

void writeFact(json::OStream &out, Type type) {
  out.object([&] {
    out.attribute("fact", factString(type));
    if (isTractTensorType(type)) {
      out.attributeArray("shape", [&] {
        for (const TDim &dim : getShape(type))
          out.value(dimValue(dim));
      });
      type = cast<RankedTensorType>(type).getElementType();
    }
    out.attribute("dtype", dtypeName(type));
  });
}

void printJson(const Listing &listing, const lib::DumpOptions &options,
               llvm::raw_ostream &os) {
  const lib::ModelProfile *profile = options.profile;
  json::OStream out(os, /*IndentSize=*/2);
  out.object([&] {
    out.attributeArray("nodes", [&] {
      for (const Node &node : listing.nodes)
        out.object([&] {
          out.attribute("id", node.id);
          out.attribute("op", node.op);
          out.attribute("name", node.name);
          out.attributeArray("outputs", [&] {
            for (Type type : node.outputs)
              writeFact(out, type);
          });
          if (options.cost && node.cost)
            writeCost(out, *node.cost);
          if (node.placement)
            out.attributeObject("placement", [&] {
              out.attribute("gpu_kernels", node.placement->kernels);
              out.attribute("cpu", node.placement->onCpu);
            });
          if (!profile || !node.ms)
            return;
          out.attributeObject("profile", [&] {
            out.attribute("ms_per_iteration", *node.ms);
            out.attribute("percent", percentOf(*node.ms, listing.totalMs));
            if (node.cost)
              if (auto rate =
                      gigaflopsPerSecond(node.cost->flops, *node.ms, *profile))
                out.attribute("gflops_per_second", *rate);
            if (node.kernels > 0)
              out.attribute("gpu_kernels", node.kernels);
          });
        });
    });
    if (options.cost)
      writeCost(out, listing.totalCost);
    if (profile)
      out.attributeObject("profile", [&] {
        out.attribute("ms_per_iteration", listing.totalMs);
        out.attribute("bench_ms_per_iteration", profile->benchMs);
        out.attribute("instrumented_ms_per_iteration", profile->instrumentedMs);
        out.attribute("percent_of_bench",
                      percentOf(listing.totalMs, profile->benchMs));
        out.attribute("runs", profile->runs);
        out.attribute("bench_runs", profile->benchRuns);
        out.attribute("instrumentation_ns_per_op", profile->instrumentationNs);
        if (const auto &copies = profile->transfers)
          out.attributeObject("gpu_copies", [&] {
            out.attribute("uploads_per_run", copies->uploads);
            out.attribute("upload_bytes_per_run", copies->uploadBytes);
            out.attribute("downloads_per_run", copies->downloads);
            out.attribute("download_bytes_per_run", copies->downloadBytes);
            out.attribute("weight_uploads", copies->weights);
            out.attribute("weight_bytes", copies->weightBytes);
            out.attribute("weight_uploads_after_warm_up",
                          copies->weightsAfterWarmUp);
          });
      });
  });
  os << "\n";
}

} // namespace

func::FuncOp mlir::tract::lib::entryFunction(ModuleOp module) {
  if (auto main = module.lookupSymbol<func::FuncOp>("main"))
    return main;
  auto functions = module.getOps<func::FuncOp>();
  return functions.empty() ? func::FuncOp() : *functions.begin();
}

void mlir::tract::lib::printListing(func::FuncOp entry,
                                    const DumpOptions &options,
                                    llvm::raw_ostream &os) {
  Listing listing = listModel(entry, options);
  if (options.json)
    printJson(listing, options, os);
  else
    printText(listing, options, os);
}

std::string mlir::tract::lib::nodeName(Location location) {
  if (auto name = dyn_cast<NameLoc>(location))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(location))
    for (Location inner : fused.getLocations())
      if (auto name = dyn_cast<NameLoc>(inner))
        return name.getName().str();
  return "";
}
