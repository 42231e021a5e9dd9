//===- MlOps.cpp - ONNX-ML: tree ensembles and linear models --------------===//
//
// The `ai.onnx.ml` operators scikit-learn, XGBoost and LightGBM exporters
// write, imported as tract ops that the compiled kernels run fast:
//
// * A tree ensemble is evaluated for every tree and node at once, as dense
//   tensors (the GEMM form of tree inference): each internal node's feature
//   is gathered and compared with its threshold (D, 1 where the node's test
//   holds); a constant C (tree, node, leaf) holds +1 where the leaf is under
//   the node's true branch and -1 under its false one, so that the einsum
//   D·C equals the number of the leaf's true-branch ancestors exactly when
//   the sample reaches the leaf; the reached leaves select their weights
//   (an einsum with the constant leaf-weight tensor, summed over trees).
//   Trees are padded to the largest: padded leaves can never be reached.
// * A linear model is an einsum with its coefficients plus the intercepts.
//
// Then the aggregate (sum or average), the base values, the post transform
// (none, logistic, softmax) and, for classifiers, the label of the largest
// score. The binary forms with a single score column give the second class
// the score and the first its complement (1 - p after a logistic, -s
// otherwise), as onnxruntime does.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/NodeContext.h"

#include "frontends/onnx/GraphImporter.h"

#include <map>
#include <set>

using namespace mlir;
using namespace mlir::tract;
using namespace mlir::tract::onnx;

namespace {

using Outputs = SmallVectorImpl<Value>;

/// A float attribute list, or its opset-3 tensor form (`NAME_as_tensor`,
/// read as the importer reads any tensor).
std::optional<SmallVector<double>> getDoubles(NodeContext &ctx,
                                              StringRef name) {
  if (std::optional<SmallVector<float>> floats = ctx.getFloats(name))
    return SmallVector<double>(floats->begin(), floats->end());
  const ::onnx::TensorProto *tensor =
      ctx.getTensor((name + "_as_tensor").str());
  if (!tensor)
    return std::nullopt;
  std::string error;
  FailureOr<DenseElementsAttr> value = ctx.getGraph().readTensor(*tensor, error);
  if (failed(value) || !isa<FloatType>(value->getElementType())) {
    (void)ctx.error(name + "_as_tensor: " +
                    (failed(value) ? error : "not a float tensor"));
    return std::nullopt;
  }
  SmallVector<double> values;
  for (const APFloat &v : value->getValues<APFloat>())
    values.push_back(v.convertToDouble());
  return values;
}

/// The input as f32 samples of rank 2 (a single sample of rank 1 gains a
/// leading axis).
Value samples(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return nullptr;
  if (!isa<FloatType, IntegerType>(NodeContext::elementType(x)) ||
      NodeContext::rank(x) < 1 || NodeContext::rank(x) > 2) {
    (void)ctx.error("the input must be a tensor of numbers of rank 1 or 2");
    return nullptr;
  }
  x = ctx.castTo(x, Float32Type::get(ctx.getContext()));
  return ctx.unsqueezeTo(x, 2);
}

/// Scores (samples, classes or targets): base values added, then the post
/// transform. `binary` has one score column for two classes.
Value finishScores(NodeContext &ctx, Value scores, ArrayRef<double> baseValues,
                   StringRef postTransform, bool binary) {
  Type f32 = Float32Type::get(ctx.getContext());
  int64_t columns = *getShape(scores.getType()).back().getConstant();
  if (!baseValues.empty()) {
    if (int64_t(baseValues.size()) != columns) {
      (void)ctx.error("base_values has " + std::to_string(baseValues.size()) +
                      " values for " + std::to_string(columns) + " scores");
      return nullptr;
    }
    SmallVector<float> values(baseValues.begin(), baseValues.end());
    auto type = RankedTensorType::get({1, columns}, f32);
    scores = ctx.create<AddOp>(
        scores, ctx.constant(DenseElementsAttr::get(type, ArrayRef(values))));
  }
  if (postTransform == "LOGISTIC")
    scores = ctx.create<SigmoidOp>(scores);
  else if (postTransform == "SOFTMAX" && !binary)
    scores = ctx.create<SoftmaxOp>(scores, ArrayRef<int64_t>{1});
  else if (postTransform != "NONE" && !(postTransform == "SOFTMAX" && binary)) {
    (void)ctx.unsupported("post_transform " + postTransform.str());
    return nullptr;
  }
  if (!binary)
    return scores;
  // The first class: 1 - p after a logistic, -s otherwise.
  Value first = postTransform == "LOGISTIC"
                    ? ctx.binary<SubOp>(ctx.scalar(f32, 1.0, 2), scores)
                    : ctx.create<NegOp>(scores);
  return ctx.create<ConcatOp>(ValueRange{first, scores}, uint64_t(1));
}

/// The label of each sample's largest score, from `labels` (int64).
Value labelOf(NodeContext &ctx, Value scores, ArrayRef<int64_t> labels) {
  Value best =
      ctx.create<ReduceOp>(scores, Reducer::ArgMax, ArrayRef<int64_t>{1});
  best = ctx.create<RmAxisOp>(best, uint64_t(1));
  auto type = RankedTensorType::get({int64_t(labels.size())},
                                    IntegerType::get(ctx.getContext(), 64));
  Value table = ctx.constant(DenseElementsAttr::get(type, labels));
  return ctx.create<GatherOp>(table, best, int64_t(0));
}

/// The class labels, which must be integers.
std::optional<SmallVector<int64_t>> classLabels(NodeContext &ctx) {
  if (ctx.hasAttr("classlabels_strings")) {
    (void)ctx.unsupported("string class labels (classlabels_strings)");
    return std::nullopt;
  }
  std::optional<SmallVector<int64_t>> labels =
      ctx.getInts("classlabels_int64s");
  if (!labels)
    labels = ctx.getInts("classlabels_ints");
  if (!labels || labels->empty()) {
    (void)ctx.error("no class labels");
    return std::nullopt;
  }
  return labels;
}

/// One tree node, by its id within its tree.
struct TreeNode {
  std::string mode;
  int64_t feature = 0;
  double value = 0;
  int64_t trueId = 0, falseId = 0;
  bool missingTracksTrue = false;
};

/// The scores of a tree ensemble: (samples, columns) summed over trees (or
/// averaged), before base values and post transform. `weightPrefix` is
/// "target" or "class".
Value treeScores(NodeContext &ctx, Value x, StringRef weightPrefix,
                 int64_t columns) {
  auto treeIds = ctx.getInts("nodes_treeids");
  auto nodeIds = ctx.getInts("nodes_nodeids");
  auto featureIds = ctx.getInts("nodes_featureids");
  auto values = getDoubles(ctx, "nodes_values");
  auto modes = ctx.getStrings("nodes_modes");
  auto trueIds = ctx.getInts("nodes_truenodeids");
  auto falseIds = ctx.getInts("nodes_falsenodeids");
  auto tracks = ctx.getInts("nodes_missing_value_tracks_true");
  auto weightTrees = ctx.getInts((weightPrefix + "_treeids").str());
  auto weightNodes = ctx.getInts((weightPrefix + "_nodeids").str());
  auto weightColumns = ctx.getInts((weightPrefix + "_ids").str());
  auto weights = getDoubles(ctx, (weightPrefix + "_weights").str());
  if (!treeIds || !nodeIds || !featureIds || !values || !modes || !trueIds ||
      !falseIds || !weightTrees || !weightNodes || !weightColumns || !weights) {
    (void)ctx.error("the tree attributes are incomplete");
    return nullptr;
  }
  size_t count = treeIds->size();
  if (nodeIds->size() != count || featureIds->size() != count ||
      values->size() != count || modes->size() != count ||
      trueIds->size() != count || falseIds->size() != count ||
      (tracks && !tracks->empty() && tracks->size() != count) ||
      weightNodes->size() != weightTrees->size() ||
      weightColumns->size() != weightTrees->size() ||
      weights->size() != weightTrees->size()) {
    (void)ctx.error("the tree attributes have different lengths");
    return nullptr;
  }

  // Trees by id, in order, and their nodes by id.
  std::map<int64_t, std::map<int64_t, TreeNode>> trees;
  for (size_t i = 0; i < count; ++i) {
    TreeNode node{
        (*modes)[i],    (*featureIds)[i],
        (*values)[i],   (*trueIds)[i],
        (*falseIds)[i], tracks && !tracks->empty() && (*tracks)[i] != 0};
    if (!trees[(*treeIds)[i]].emplace((*nodeIds)[i], node).second) {
      (void)ctx.error("node " + std::to_string((*nodeIds)[i]) + " of tree " +
                      std::to_string((*treeIds)[i]) + " is given twice");
      return nullptr;
    }
  }
  int64_t numTrees = trees.size();
  int64_t numFeatures = *getShape(x.getType())[1].getConstant();

  // Per tree: internal nodes and leaves in id order, each leaf's path.
  struct Layout {
    SmallVector<int64_t> internal, leaves;
    std::map<int64_t, int64_t> internalIndex, leafIndex;
    // For each leaf, its ancestors' internal indices and the branch taken.
    SmallVector<SmallVector<std::pair<int64_t, bool>>> paths;
  };
  std::vector<Layout> layouts;
  int64_t maxInternal = 1, maxLeaves = 1;
  std::set<std::string> modesUsed;
  for (auto &[treeId, nodes] : trees) {
    Layout layout;
    for (auto &[id, node] : nodes) {
      if (node.mode == "LEAF") {
        layout.leafIndex[id] = layout.leaves.size();
        layout.leaves.push_back(id);
        continue;
      }
      static const char *kModes[] = {"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE",
                                     "BRANCH_GT",  "BRANCH_EQ", "BRANCH_NEQ"};
      if (!llvm::is_contained(kModes, node.mode)) {
        (void)ctx.unsupported("node mode " + node.mode);
        return nullptr;
      }
      if (node.feature < 0 || node.feature >= numFeatures) {
        (void)ctx.error("a node tests feature " + std::to_string(node.feature) +
                        " of " + std::to_string(numFeatures));
        return nullptr;
      }
      modesUsed.insert(node.mode);
      layout.internalIndex[id] = layout.internal.size();
      layout.internal.push_back(id);
    }
    // Paths from the root, the node with the smallest id.
    layout.paths.resize(layout.leaves.size());
    SmallVector<std::pair<int64_t, SmallVector<std::pair<int64_t, bool>>>>
        stack{{nodes.begin()->first, {}}};
    size_t visited = 0;
    while (!stack.empty()) {
      auto [id, path] = stack.pop_back_val();
      if (++visited > nodes.size()) {
        (void)ctx.error("tree " + std::to_string(treeId) + " is not a tree");
        return nullptr;
      }
      auto it = nodes.find(id);
      if (it == nodes.end()) {
        (void)ctx.error("tree " + std::to_string(treeId) + " has no node " +
                        std::to_string(id));
        return nullptr;
      }
      if (it->second.mode == "LEAF") {
        layout.paths[layout.leafIndex[id]] = path;
        continue;
      }
      int64_t index = layout.internalIndex[id];
      auto taken = path;
      taken.push_back({index, true});
      stack.push_back({it->second.trueId, taken});
      path.push_back({index, false});
      stack.push_back({it->second.falseId, path});
    }
    maxInternal = std::max<int64_t>(maxInternal, layout.internal.size());
    maxLeaves = std::max<int64_t>(maxLeaves, layout.leaves.size());
    layouts.push_back(std::move(layout));
  }

  // The constants: features, thresholds, modes and missing-value branches
  // (tree, node); the path matrix (tree, node, leaf) and the number of true
  // branches on each leaf's path (tree, leaf); the weights (tree, leaf,
  // column).
  int64_t I = maxInternal, L = maxLeaves;
  SmallVector<int64_t> features(numTrees * I, 0);
  SmallVector<float> thresholds(numTrees * I, 0), path(numTrees * I * L, 0),
      trueCounts(numTrees * L, -1), leafWeights(numTrees * L * columns, 0);
  std::map<std::string, SmallVector<float>> modeMasks;
  for (const std::string &mode : modesUsed)
    modeMasks[mode].assign(numTrees * I, 0);
  SmallVector<float> tracksTrue(numTrees * I, 0);
  bool anyTracks = false;
  std::map<int64_t, int64_t> treeIndex;
  for (auto [t, entry] : llvm::enumerate(trees)) {
    auto &[treeId, nodes] = entry;
    treeIndex[treeId] = t;
    const Layout &layout = layouts[t];
    for (auto [i, id] : llvm::enumerate(layout.internal)) {
      const TreeNode &node = nodes.at(id);
      features[t * I + i] = node.feature;
      thresholds[t * I + i] = float(node.value);
      modeMasks[node.mode][t * I + i] = 1;
      tracksTrue[t * I + i] = node.missingTracksTrue;
      anyTracks |= node.missingTracksTrue;
    }
    for (auto [l, ancestors] : llvm::enumerate(layout.paths)) {
      float trues = 0;
      for (auto [i, branch] : ancestors) {
        path[(t * I + i) * L + l] = branch ? 1 : -1;
        trues += branch;
      }
      trueCounts[t * L + l] = trues;
    }
  }
  for (size_t w = 0; w < weightTrees->size(); ++w) {
    auto tree = treeIndex.find((*weightTrees)[w]);
    int64_t column = (*weightColumns)[w];
    if (tree == treeIndex.end() || column < 0 || column >= columns) {
      (void)ctx.error("a weight names tree " +
                      std::to_string((*weightTrees)[w]) + " and column " +
                      std::to_string(column) + ", which do not exist");
      return nullptr;
    }
    const Layout &layout = layouts[tree->second];
    auto leaf = layout.leafIndex.find((*weightNodes)[w]);
    if (leaf == layout.leafIndex.end()) {
      (void)ctx.error("a weight is on node " +
                      std::to_string((*weightNodes)[w]) +
                      ", which is not a leaf");
      return nullptr;
    }
    leafWeights[(tree->second * L + leaf->second) * columns + column] +=
        float((*weights)[w]);
  }

  MLIRContext *context = ctx.getContext();
  Type f32 = Float32Type::get(context), i64 = IntegerType::get(context, 64);
  auto constant = [&](ArrayRef<int64_t> shape, auto values, Type type) {
    return ctx.constant(DenseElementsAttr::get(
        RankedTensorType::get(shape, type), ArrayRef(values)));
  };
  // (samples, tree, node): the tested features and the tests' outcomes.
  Value tested = ctx.create<GatherOp>(x, constant({numTrees, I}, features, i64),
                                      int64_t(1));
  Value threshold = constant({1, numTrees, I}, thresholds, f32);
  Value outcome;
  for (auto &[mode, mask] : modeMasks) {
    Value holds = mode == "BRANCH_LEQ"   ? ctx.create<LeOp>(tested, threshold)
                  : mode == "BRANCH_LT"  ? ctx.create<LtOp>(tested, threshold)
                  : mode == "BRANCH_GTE" ? ctx.create<GeOp>(tested, threshold)
                  : mode == "BRANCH_GT"  ? ctx.create<GtOp>(tested, threshold)
                  : mode == "BRANCH_EQ"  ? ctx.create<EqOp>(tested, threshold)
                                         : ctx.create<NeOp>(tested, threshold);
    Value part = ctx.castTo(holds, f32);
    if (modeMasks.size() > 1)
      part = ctx.create<MulOp>(part, constant({1, numTrees, I}, mask, f32));
    outcome = outcome ? ctx.create<AddOp>(outcome, part) : part;
  }
  if (anyTracks) {
    // A missing value (NaN) takes the true branch where the node says so.
    Value missing = ctx.castTo(ctx.create<IsNanOp>(tested), f32);
    outcome = ctx.create<MaxOp>(
        outcome, ctx.create<MulOp>(
                     missing, constant({1, numTrees, I}, tracksTrue, f32)));
  }
  Value trues = ctx.create<EinsumOp>(
      ValueRange{outcome, constant({numTrees, I, L}, path, f32)},
      "nti,til->ntl");
  Value reached = ctx.castTo(
      ctx.create<EqOp>(trues, constant({1, numTrees, L}, trueCounts, f32)),
      f32);
  Value scores = ctx.create<EinsumOp>(
      ValueRange{reached, constant({numTrees, L, columns}, leafWeights, f32)},
      "ntl,tlk->nk");
  std::string aggregate = ctx.getString("aggregate_function", "SUM");
  if (aggregate == "AVERAGE")
    scores = ctx.binary<DivOp>(scores, ctx.scalar(f32, double(numTrees), 2));
  else if (aggregate != "SUM") {
    (void)ctx.unsupported("aggregate_function " + aggregate);
    return nullptr;
  }
  return scores;
}

/// A classifier's samples and class labels.
std::pair<Value, std::optional<SmallVector<int64_t>>>
classifierInputs(NodeContext &ctx) {
  Value x = samples(ctx);
  if (!x)
    return {};
  return {x, classLabels(ctx)};
}

/// A model's outputs from its raw scores: the base values (tree ensembles
/// have them), the post transform and, for a classifier, the labels first.
LogicalResult emitOutputs(NodeContext &ctx, Value scores, bool baseValues,
                          bool binary, const SmallVector<int64_t> *labels,
                          Outputs &outputs) {
  if (!scores)
    return failure();
  std::optional<SmallVector<double>> base;
  if (baseValues)
    base = getDoubles(ctx, "base_values");
  scores = finishScores(ctx, scores, base ? *base : SmallVector<double>(),
                        ctx.getString("post_transform", "NONE"), binary);
  if (!scores)
    return failure();
  if (labels)
    outputs.push_back(labelOf(ctx, scores, *labels));
  outputs.push_back(scores);
  return success();
}

LogicalResult treeEnsembleRegressor(NodeContext &ctx, Outputs &outputs) {
  Value x = samples(ctx);
  if (!x)
    return failure();
  int64_t targets = ctx.getInt("n_targets", 1);
  return emitOutputs(ctx, treeScores(ctx, x, "target", targets),
                     /*baseValues=*/true, /*binary=*/false, nullptr, outputs);
}

LogicalResult treeEnsembleClassifier(NodeContext &ctx, Outputs &outputs) {
  auto [x, labels] = classifierInputs(ctx);
  if (!x || !labels)
    return failure();
  // One score column for two classes: the score of the second.
  auto classIds = ctx.getInts("class_ids");
  bool binary = labels->size() == 2 && classIds &&
                llvm::all_of(*classIds, [](int64_t id) { return id == 0; });
  int64_t columns = binary ? 1 : labels->size();
  return emitOutputs(ctx, treeScores(ctx, x, "class", columns),
                     /*baseValues=*/true, binary, &*labels, outputs);
}

/// (samples, features) by (rows, features) coefficients, plus intercepts.
Value linearScores(NodeContext &ctx, Value x, int64_t rows) {
  auto coefficients = ctx.getFloats("coefficients");
  auto intercepts = ctx.getFloats("intercepts");
  int64_t features = *getShape(x.getType())[1].getConstant();
  if (!coefficients || int64_t(coefficients->size()) != rows * features) {
    (void)ctx.error("coefficients must hold " + std::to_string(rows) +
                    " rows of " + std::to_string(features) + " features");
    return nullptr;
  }
  Type f32 = Float32Type::get(ctx.getContext());
  Value matrix = ctx.constant(DenseElementsAttr::get(
      RankedTensorType::get({rows, features}, f32), ArrayRef(*coefficients)));
  Value scores = ctx.create<EinsumOp>(ValueRange{x, matrix}, "nf,rf->nr");
  if (intercepts && !intercepts->empty()) {
    if (int64_t(intercepts->size()) != rows) {
      (void)ctx.error("intercepts must hold " + std::to_string(rows) +
                      " values");
      return nullptr;
    }
    scores = ctx.create<AddOp>(
        scores,
        ctx.constant(DenseElementsAttr::get(
            RankedTensorType::get({1, rows}, f32), ArrayRef(*intercepts))));
  }
  return scores;
}

LogicalResult linearRegressor(NodeContext &ctx, Outputs &outputs) {
  Value x = samples(ctx);
  if (!x)
    return failure();
  return emitOutputs(ctx, linearScores(ctx, x, ctx.getInt("targets", 1)),
                     /*baseValues=*/false, /*binary=*/false, nullptr, outputs);
}

LogicalResult linearClassifier(NodeContext &ctx, Outputs &outputs) {
  auto [x, labels] = classifierInputs(ctx);
  if (!x || !labels)
    return failure();
  auto coefficients = ctx.getFloats("coefficients");
  int64_t features = *getShape(x.getType())[1].getConstant();
  if (!coefficients || features == 0)
    return ctx.error("no coefficients");
  int64_t rows = coefficients->size() / features;
  bool binary = labels->size() == 2 && rows == 1;
  if (!binary && rows != int64_t(labels->size()))
    return ctx.error("coefficients hold " + std::to_string(rows) +
                     " rows for " + std::to_string(labels->size()) +
                     " classes");
  return emitOutputs(ctx, linearScores(ctx, x, rows), /*baseValues=*/false,
                     binary, &*labels, outputs);
}

} // namespace

void mlir::tract::onnx::registerMlOps(OpRegistry &registry) {
  registry.add("ai.onnx.ml.TreeEnsembleRegressor", {1, 3},
               treeEnsembleRegressor);
  registry.add("ai.onnx.ml.TreeEnsembleClassifier", {1, 3},
               treeEnsembleClassifier);
  registry.add("ai.onnx.ml.LinearRegressor", 1, linearRegressor);
  registry.add("ai.onnx.ml.LinearClassifier", 1, linearClassifier);
}
