//===- QdqFusion.cpp - quantize-dequantize pairs as integer ops -----------===//

#include "frontends/onnx/QdqFusion.h"

#include "frontends/onnx/onnx.pb.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::tract::onnx {

namespace {

using ::onnx::NodeProto;

class Fusion {
public:
  explicit Fusion(::onnx::GraphProto &graph) : graph(graph) {
    for (const auto &output : graph.output())
      graphOutputs.insert(output.name());
    for (const auto &initializer : graph.initializer())
      initializers[initializer.name()] = &initializer;
    for (int i = 0; i < graph.node_size(); ++i) {
      const NodeProto &node = graph.node(i);
      for (const std::string &output : node.output())
        if (!output.empty())
          producers[output] = i;
      for (const std::string &input : node.input())
        if (!input.empty()) {
          ++uses[input];
          consumers[input] = i;
        }
    }
  }

  int run() {
    int fused = 0;
    std::vector<bool> removed(graph.node_size(), false);
    std::vector<std::pair<int, std::vector<NodeProto>>> replacements;
    for (int i = 0; i < graph.node_size(); ++i) {
      const NodeProto &node = graph.node(i);
      bool conv = node.op_type() == "Conv" && node.domain().empty();
      bool matmul = node.op_type() == "MatMul" && node.domain().empty();
      bool gemm = node.op_type() == "Gemm" && node.domain().empty();
      if (node.op_type() == "MaxPool" && node.domain().empty()) {
        if (std::optional<std::pair<int, NodeProto>> pool = matchPool(i)) {
          removed[i] = true;
          replacements.push_back({pool->first, {pool->second}});
          ++fused;
        }
        continue;
      }
      if (!conv && !matmul && !gemm)
        continue;
      Kind kind = conv ? Kind::Conv : gemm ? Kind::Gemm : Kind::MatMul;
      std::optional<Match> match = matchAround(i, kind);
      if (!match)
        continue;
      for (int at : match->removed)
        removed[at] = true;
      replacements.push_back({match->quantizeIndex, build(node, *match, kind)});
      ++fused;
    }
    if (!fused)
      return 0;
    // The fused nodes take the place of the QuantizeLinear each ends in:
    // every input of the pattern is computed by then.
    std::vector<std::vector<NodeProto>> at(graph.node_size());
    for (auto &[index, nodes] : replacements)
      at[index] = std::move(nodes);
    google::protobuf::RepeatedPtrField<NodeProto> nodes;
    for (int i = 0; i < graph.node_size(); ++i) {
      if (!at[i].empty()) {
        for (NodeProto &node : at[i])
          *nodes.Add() = std::move(node);
        continue;
      }
      if (!removed[i])
        *nodes.Add() = std::move(*graph.mutable_node(i));
    }
    graph.mutable_node()->Swap(&nodes);
    return fused;
  }

private:
  ::onnx::GraphProto &graph;
  llvm::DenseSet<llvm::StringRef> graphOutputs;
  llvm::StringMap<const ::onnx::TensorProto *> initializers;
  llvm::StringMap<int> producers;
  llvm::StringMap<int> uses;
  /// A node that reads each value (the only one where `uses` is 1).
  llvm::StringMap<int> consumers;

  /// The float products fused: Conv into QLinearConv, MatMul into
  /// QLinearMatMul, Gemm into com.microsoft's QGemm.
  enum class Kind { Conv, MatMul, Gemm };

  struct Match {
    const NodeProto *x, *w, *bias, *quantize;
    /// A Relu or Clip between the product and the quantization.
    const NodeProto *activation;
    int quantizeIndex;
    std::vector<int> removed;
  };

  const NodeProto *producer(const std::string &value, llvm::StringRef type) {
    auto it = producers.find(value);
    if (it == producers.end())
      return nullptr;
    const NodeProto &node = graph.node(it->second);
    return node.op_type() == type && node.domain().empty() ? &node : nullptr;
  }

  /// The single node that reads `value`, when nothing else does.
  int onlyConsumer(const std::string &value) {
    if (graphOutputs.contains(value) || uses.lookup(value) != 1)
      return -1;
    return consumers.lookup(value);
  }

  std::optional<int64_t> intAttribute(const NodeProto &node,
                                      llvm::StringRef name) {
    for (const auto &attribute : node.attribute())
      if (attribute.name() == name)
        return attribute.i();
    return std::nullopt;
  }

  /// The rank of an initializer, or -1 when `name` is not one.
  int rankOf(const std::string &name) {
    const ::onnx::TensorProto *tensor = initializers.lookup(name);
    return tensor ? tensor->dims_size() : -1;
  }

  /// Whether `dequantize` has per-tensor parameters, or per-channel ones
  /// along `axis` of its input of rank `rank`.
  bool plainDequantize(const NodeProto &dequantize, int64_t axis, int rank) {
    if (intAttribute(dequantize, "block_size").value_or(0) != 0)
      return false;
    int scaleRank = rankOf(dequantize.input(1));
    if (scaleRank < 0)
      return false;
    if (scaleRank == 0)
      return true;
    int64_t given = intAttribute(dequantize, "axis").value_or(1);
    if (given < 0)
      given += rank;
    return scaleRank == 1 && given == axis;
  }

  std::optional<float> floatAttribute(const NodeProto &node,
                                      llvm::StringRef name) {
    for (const auto &attribute : node.attribute())
      if (attribute.name() == name)
        return attribute.f();
    return std::nullopt;
  }

  std::optional<Match> matchAround(int index, Kind kind) {
    const NodeProto &node = graph.node(index);
    bool conv = kind == Kind::Conv, gemm = kind == Kind::Gemm;
    if (node.input_size() < 2 || node.output_size() != 1)
      return std::nullopt;
    // QGemm has no beta: its bias is at the product's scale.
    if (gemm && (floatAttribute(node, "beta").value_or(1.0f) != 1.0f ||
                 intAttribute(node, "transA").value_or(0) != 0))
      return std::nullopt;
    bool transB = gemm && intAttribute(node, "transB").value_or(0) != 0;
    Match match{};
    match.x = producer(node.input(0), "DequantizeLinear");
    match.w = producer(node.input(1), "DequantizeLinear");
    if (!match.x || !match.w || !plainDequantize(*match.x, 0, 0))
      return std::nullopt;
    int weightRank = rankOf(match.w->input(0));
    // The weights' per-channel axis is the output channel's.
    int64_t channelAxis = conv || transB ? 0 : weightRank - 1;
    if (weightRank < 2 ||
        !plainDequantize(*match.w, channelAxis, weightRank) ||
        (!conv && weightRank != 2))
      return std::nullopt;
    if ((conv || gemm) && node.input_size() > 2 && !node.input(2).empty()) {
      match.bias = producer(node.input(2), "DequantizeLinear");
      const ::onnx::TensorProto *bias =
          match.bias ? initializers.lookup(match.bias->input(0)) : nullptr;
      if (!bias || bias->data_type() != ::onnx::TensorProto::INT32 ||
          (gemm && bias->dims_size() != 1))
        return std::nullopt;
    }
    int consumer = onlyConsumer(node.output(0));
    if (consumer < 0)
      return std::nullopt;
    match.removed.push_back(index);
    const NodeProto &next = graph.node(consumer);
    // Clip's bounds as inputs (opset 11 on), not attributes.
    bool clip = next.op_type() == "Clip" && next.domain().empty() &&
                !intAttribute(next, "min") && !intAttribute(next, "max") &&
                next.attribute_size() == 0;
    if ((next.op_type() == "Relu" && next.domain().empty()) || clip) {
      match.activation = &next;
      match.removed.push_back(consumer);
      consumer = onlyConsumer(next.output(0));
      if (consumer < 0)
        return std::nullopt;
    }
    const NodeProto &quantize = graph.node(consumer);
    if (quantize.op_type() != "QuantizeLinear" || !quantize.domain().empty() ||
        rankOf(quantize.input(1)) != 0 ||
        intAttribute(quantize, "block_size").value_or(0) != 0 ||
        intAttribute(quantize, "output_dtype").has_value() ||
        intAttribute(quantize, "saturate").has_value())
      return std::nullopt;
    // QLinearMatMul and QGemm need the output's zero point (its type).
    bool hasZero = quantize.input_size() > 2 && !quantize.input(2).empty();
    if (!conv && !hasZero)
      return std::nullopt;
    match.quantize = &quantize;
    match.quantizeIndex = consumer;
    return match;
  }

  /// An initializer's type and values as bytes, when `name` is one.
  std::optional<std::string> initializerBytes(const std::string &name) {
    const ::onnx::TensorProto *tensor = initializers.lookup(name);
    if (!tensor)
      return std::nullopt;
    ::onnx::TensorProto values = *tensor;
    values.clear_name();
    return values.SerializeAsString();
  }

  /// Whether two (scale, zero point) pairs of the same value are equal:
  /// the same names, or initializers of the same bytes.
  bool sameParameters(const NodeProto &a, const NodeProto &b) {
    for (int i = 1; i <= 2; ++i) {
      std::string x = input(a, i), y = input(b, i);
      if (x == y)
        continue;
      std::optional<std::string> xb = initializerBytes(x),
                                 yb = initializerBytes(y);
      if (!xb || !yb || *xb != *yb)
        return false;
    }
    return true;
  }

  /// DequantizeLinear -> MaxPool -> QuantizeLinear of the same scale and
  /// zero point: the maximum commutes with the (monotonic) quantization,
  /// so the pool runs on the quantized tensor itself. Returns the index of
  /// the QuantizeLinear the pool replaces, and the pool.
  std::optional<std::pair<int, NodeProto>> matchPool(int index) {
    const NodeProto &pool = graph.node(index);
    if (pool.input_size() != 1 || pool.output_size() != 1)
      return std::nullopt;
    const NodeProto *dequantize = producer(pool.input(0), "DequantizeLinear");
    if (!dequantize || rankOf(dequantize->input(1)) != 0 ||
        intAttribute(*dequantize, "block_size").value_or(0) != 0)
      return std::nullopt;
    int consumer = onlyConsumer(pool.output(0));
    if (consumer < 0)
      return std::nullopt;
    const NodeProto &quantize = graph.node(consumer);
    if (quantize.op_type() != "QuantizeLinear" || !quantize.domain().empty() ||
        quantize.attribute_size() != 0 ||
        !sameParameters(*dequantize, quantize))
      return std::nullopt;
    NodeProto fused = pool;
    *fused.mutable_input(0) = dequantize->input(0);
    *fused.mutable_output(0) = quantize.output(0);
    return std::make_pair(consumer, fused);
  }

  static std::string input(const NodeProto &node, int i) {
    return i < node.input_size() ? node.input(i) : std::string();
  }

  std::vector<NodeProto> build(const NodeProto &node, const Match &match,
                               Kind kind) {
    NodeProto fused;
    fused.set_op_type(kind == Kind::Conv     ? "QLinearConv"
                      : kind == Kind::MatMul ? "QLinearMatMul"
                                             : "QGemm");
    if (kind == Kind::Gemm)
      fused.set_domain("com.microsoft");
    fused.set_name(node.name().empty() ? match.quantize->name()
                                       : node.name());
    for (const std::string &name :
         {input(*match.x, 0), input(*match.x, 1), input(*match.x, 2),
          input(*match.w, 0), input(*match.w, 1), input(*match.w, 2)})
      fused.add_input(name);
    // QGemm takes its bias before the output's parameters, QLinearConv
    // after them.
    std::string bias = match.bias ? match.bias->input(0) : std::string();
    if (kind == Kind::Gemm)
      fused.add_input(bias);
    fused.add_input(input(*match.quantize, 1));
    fused.add_input(input(*match.quantize, 2));
    if (kind == Kind::Conv && match.bias)
      fused.add_input(bias);
    if (kind != Kind::MatMul)
      for (const auto &attribute : node.attribute())
        if (kind == Kind::Conv || attribute.name() == "alpha" ||
            attribute.name() == "transB")
          *fused.add_attribute() = attribute;
    std::string output = match.quantize->output(0);
    std::string scale = input(*match.quantize, 1);
    std::string zero = input(*match.quantize, 2);
    if (!match.activation) {
      fused.add_output(output);
      return {fused};
    }
    // Quantizing is monotonic: quantizing max(y, lo) is the maximum of y
    // quantized and lo quantized, and the same for min.
    std::vector<NodeProto> nodes;
    std::string value = output + "_unclipped";
    fused.add_output(value);
    nodes.push_back(fused);
    auto bound = [&](const std::string &real, const char *op,
                     const char *suffix) {
      std::string name = fused.name() + suffix;
      std::string quantized = real;
      if (!real.empty()) {
        NodeProto quantize;
        quantize.set_op_type("QuantizeLinear");
        quantize.set_name(name + "_bound");
        quantize.add_input(real);
        quantize.add_input(scale);
        if (!zero.empty())
          quantize.add_input(zero);
        quantized = name + "_bound";
        quantize.add_output(quantized);
        nodes.push_back(quantize);
      }
      NodeProto limit;
      limit.set_op_type(op);
      limit.set_name(name);
      limit.add_input(value);
      limit.add_input(quantized);
      value = name;
      limit.add_output(value);
      nodes.push_back(limit);
    };
    const NodeProto &activation = *match.activation;
    if (activation.op_type() == "Relu") {
      // The floor is the zero point (absent: 0, the type's floor already).
      if (!zero.empty()) {
        NodeProto floor;
        floor.set_op_type("Max");
        floor.set_name(fused.name() + "_relu");
        floor.add_input(value);
        floor.add_input(zero);
        value = floor.name();
        floor.add_output(value);
        nodes.push_back(floor);
      }
    } else {
      if (!input(activation, 1).empty())
        bound(input(activation, 1), "Max", "_clip_min");
      if (!input(activation, 2).empty())
        bound(input(activation, 2), "Min", "_clip_max");
    }
    // The last node writes the pattern's output.
    *nodes.back().mutable_output(0) = output;
    return nodes;
  }
};

} // namespace

int fuseQdqProducts(::onnx::GraphProto &graph) { return Fusion(graph).run(); }

} // namespace mlir::tract::onnx
