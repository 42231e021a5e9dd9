//===- facts.cpp - fuzz tract's input facts (-i) --------------------------===//
//
// Any bytes, one fact a line (`1,S,64,f32`, `x:2,i64=3,4`, `sr:i64=16000`),
// applied to a small ONNX model with a symbolic input and a scalar one: a
// verified module or an error naming the fact, never a crash. Facts naming
// a tensor file (`@FILE.pb`) are left out: the fuzzer reads no files.
//
//===----------------------------------------------------------------------===//

#include "test/fuzz/FuzzContext.h"

#include "frontends/onnx/OnnxImporter.h"
#include "frontends/onnx/onnx.pb.h"


#include <cstdint>

namespace {

/// x: f32 [1,S,64] and sr: i64 [] in; relu(x) and sr out.
std::string makeModel() {
  ::onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  ::onnx::GraphProto *graph = model.mutable_graph();
  graph->set_name("facts");
  auto declare = [](::onnx::ValueInfoProto *value, const char *name,
                    int elementType, std::vector<std::string> dims) {
    value->set_name(name);
    auto *tensor = value->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(elementType);
    auto *shape = tensor->mutable_shape();
    for (const std::string &dim : dims) {
      auto *d = shape->add_dim();
      if (dim[0] >= '0' && dim[0] <= '9')
        d->set_dim_value(std::stoll(dim));
      else
        d->set_dim_param(dim);
    }
  };
  declare(graph->add_input(), "x", ::onnx::TensorProto::FLOAT,
          {"1", "S", "64"});
  declare(graph->add_input(), "sr", ::onnx::TensorProto::INT64, {});
  auto node = [&](const char *type, const char *input, const char *output) {
    ::onnx::NodeProto *n = graph->add_node();
    n->set_op_type(type);
    n->add_input(input);
    n->add_output(output);
  };
  node("Relu", "x", "y");
  node("Identity", "sr", "rate");
  graph->add_output()->set_name("y");
  graph->add_output()->set_name("rate");
  return model.SerializeAsString();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string model = makeModel();
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  mlir::tract::onnx::ImportOptions options;
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  for (llvm::StringRef line : lines)
    if (!line.contains('@'))
      options.inputFacts.push_back(line.str());
  (void)mlir::tract::onnx::importOnnxBytes(
      model, "/nonexistent-fuzz-folder/facts.onnx",
      &tract_fuzz::contextForNextInput(), options);
  return 0;
}
