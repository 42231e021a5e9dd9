//===- TensorProtoData.h - the values an ONNX TensorProto holds -*- C++ -*-===//
//
// One reading of a TensorProto's inline values, shared by the importer (for
// initializers and Constant nodes) and the command line (for test data sets
// and -i @file.pb). It needs protobuf and LLVM's Support only.
//
//===----------------------------------------------------------------------===//

#ifndef FRONTENDS_ONNX_TENSORPROTODATA_H
#define FRONTENDS_ONNX_TENSORPROTODATA_H

#include "frontends/onnx/onnx.pb.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::tract {

/// The values `tensor` holds in the file as little-endian bytes of its
/// element type (one byte a bool): its `raw_data`, else the typed field
/// ONNX keeps that data type in, converted into `storage`. The result views
/// `tensor` or `storage`. External data is the caller's to read.
llvm::StringRef onnxInlineBytes(const ::onnx::TensorProto &tensor,
                                std::string &storage);

/// The name ONNX gives a data type, or "data type N" for an unknown one.
std::string onnxDataTypeName(int dataType);

} // namespace mlir::tract

#endif // FRONTENDS_ONNX_TENSORPROTODATA_H
