//===- GraphImporter.h - ONNX graphs and tensors to tract IR ----*- C++ -*-===//
//
// Internal to the ONNX frontend: the state of one model import (opsets,
// symbols, symbolic values of shape tensors) and of one graph scope (names
// to values), shared by the main graph and the subgraphs of If, Loop and
// Scan.
//
//===----------------------------------------------------------------------===//

#ifndef FRONTENDS_ONNX_GRAPHIMPORTER_H
#define FRONTENDS_ONNX_GRAPHIMPORTER_H

#include "dialects/tdim/TDim.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <memory>
#include <set>
#include <string>

namespace onnx {
class GraphProto;
class TensorProto;
class TypeProto;
class ValueInfoProto;
} // namespace onnx

namespace mlir::tract::onnx {

struct MappedFile;

/// What one model import shares across its graphs.
struct ModelState {
  MLIRContext *context;
  /// The model's folder, against which external data paths resolve.
  std::string baseDir;
  /// The model file, for locations.
  std::string fileName;
  /// The default-domain opset.
  int64_t opset = 1;
  /// The opset of the ai.onnx.ml domain (1 when the model does not say).
  int64_t mlOpset = 1;
  /// The opset of onnxruntime's com.microsoft domain (1 when not said).
  int64_t msOpset = 1;
  /// Symbolic values of small integer tensors (shapes being computed).
  DenseMap<Value, SmallVector<TDim>> dims;
  /// Every symbol in use, for the module's `tract.symbols`.
  std::set<std::string> symbols;
  int freshCounter = 0;
  /// Equalities between dims the model relies on and the shapes cannot
  /// prove (`(unk+320)/512 == 1` for a squeezed axis), for the module's
  /// `tract.assertions`, checked when the model runs.
  std::vector<std::string> assertions;
  /// Where assertions go while an If branch is imported: they hold only
  /// when that branch runs (null: the model's).
  std::vector<std::string> *branchAssertions = nullptr;
  /// The main graph, when the importer owns the parsed model: each
  /// initializer's data goes as soon as its attribute holds a copy, so
  /// that the weights are not in memory twice.
  ::onnx::GraphProto *ownedGraph = nullptr;
  /// The model file, mapped, and where each main-graph initializer's raw
  /// data is in it (MappedWeights.h): large weights are read in place.
  std::shared_ptr<MappedFile> modelFile;
  std::vector<std::pair<int64_t, int64_t>> initializerData;
  /// The main-graph initializers whose raw data the parse skipped
  /// (stripLargeData), and where it is in the mapped file.
  DenseMap<const ::onnx::TensorProto *, std::pair<int64_t, int64_t>> stripped;
};

/// The MLIR element type of an ONNX `TensorProto.DataType`, or null with
/// `name` set to the dtype's name when the type is not supported.
Type convertDataType(MLIRContext *context, int dataType, std::string &name);

/// A valid symbol name for an ONNX `dim_param`.
std::string sanitizeSymbol(StringRef name);

/// One scope of names.
class GraphImporter {
public:
  GraphImporter(ModelState &model, GraphImporter *parent = nullptr)
      : model(model), parent(parent) {}

  ModelState &getModel() { return model; }

  /// The value named `name` here or in an enclosing graph; null if none.
  Value lookup(StringRef name) const;
  void define(StringRef name, Value value) { values[name] = value; }
  /// The tensors of the sequence named `name` here or in an enclosing graph
  /// (a list known at import); null if none.
  const SmallVector<Value> *lookupSequence(StringRef name) const;
  void defineSequence(StringRef name, ArrayRef<Value> tensors) {
    sequences[name] = SmallVector<Value>(tensors);
  }

  /// Builds a `tract.const` from a TensorProto, reading external data when
  /// the tensor says so.
  /// `tensor`'s type, with its element count; failure with `error` set.
  FailureOr<RankedTensorType> typeOf(const ::onnx::TensorProto &tensor,
                                     int64_t &count, std::string &error);
  /// The `index`-th initializer of the main graph as a constant over the
  /// mapped model or external data file (MappedWeights.h); null when it is
  /// not a large float weight that can be mapped.
  Value importMappedWeight(const ::onnx::TensorProto &tensor, size_t index,
                           OpBuilder &builder, Location loc);
  FailureOr<Value> importTensor(const ::onnx::TensorProto &tensor,
                                OpBuilder &builder, Location loc,
                                std::string &error);
  FailureOr<DenseElementsAttr> readTensor(const ::onnx::TensorProto &tensor,
                                          std::string &error);

  /// The tensor type a graph input or output declares; unknown dims get
  /// fresh symbols.
  FailureOr<RankedTensorType> convertType(const ::onnx::TypeProto &type,
                                          StringRef what, std::string &error);

  /// Imports the initializers and nodes of `graph` at the builder's
  /// insertion point, after the caller has defined the graph's inputs.
  LogicalResult importNodes(const ::onnx::GraphProto &graph,
                            OpBuilder &builder);

  /// Imports a subgraph whose inputs are `inputs`, in a nested scope, and
  /// returns the values of its outputs.
  FailureOr<SmallVector<Value>> importSubgraph(const ::onnx::GraphProto &graph,
                                               ArrayRef<Value> inputs,
                                               OpBuilder &builder);

  TDim freshSymbol(StringRef hint);
  /// Records the assertion `actual == expected`.
  void assumeEqual(const TDim &actual, const TDim &expected);
  /// Records the assertion `lhs <= rhs`.
  void assumeAtMost(const TDim &lhs, const TDim &rhs);
  Location nodeLocation(StringRef name);

private:
  ModelState &model;
  GraphImporter *parent;
  llvm::StringMap<Value> values;
  llvm::StringMap<SmallVector<Value>> sequences;
};

} // namespace mlir::tract::onnx

#endif // FRONTENDS_ONNX_GRAPHIMPORTER_H
