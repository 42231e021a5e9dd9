//===- TensorProtoData.cpp - the values an ONNX TensorProto holds ---------===//

#include "frontends/onnx/TensorProtoData.h"

namespace {

template <typename T, typename Field>
void appendAs(std::string &bytes, const Field &field) {
  for (auto value : field) {
    T converted = static_cast<T>(value);
    bytes.append(reinterpret_cast<const char *>(&converted), sizeof(T));
  }
}

} // namespace

llvm::StringRef mlir::tract::onnxInlineBytes(const ::onnx::TensorProto &tensor,
                                             std::string &storage) {
  using TP = ::onnx::TensorProto;
  if (tensor.has_raw_data())
    return tensor.raw_data();
  storage.clear();
  switch (tensor.data_type()) {
  case TP::FLOAT:
    appendAs<float>(storage, tensor.float_data());
    break;
  case TP::DOUBLE:
    appendAs<double>(storage, tensor.double_data());
    break;
  case TP::INT64:
    appendAs<int64_t>(storage, tensor.int64_data());
    break;
  case TP::UINT32:
    appendAs<uint32_t>(storage, tensor.uint64_data());
    break;
  case TP::UINT64:
    appendAs<uint64_t>(storage, tensor.uint64_data());
    break;
  case TP::INT32:
    appendAs<int32_t>(storage, tensor.int32_data());
    break;
  // Narrow types are kept one value per int32, f16 and bf16 by their bits.
  case TP::INT16:
  case TP::UINT16:
  case TP::FLOAT16:
  case TP::BFLOAT16:
    appendAs<uint16_t>(storage, tensor.int32_data());
    break;
  case TP::INT8:
  case TP::UINT8:
  case TP::BOOL:
    appendAs<uint8_t>(storage, tensor.int32_data());
    break;
  default:
    break;
  }
  return storage;
}

std::string mlir::tract::onnxDataTypeName(int dataType) {
  using TP = ::onnx::TensorProto;
  return TP::DataType_IsValid(dataType)
             ? TP::DataType_Name(static_cast<TP::DataType>(dataType))
             : "data type " + std::to_string(dataType);
}
