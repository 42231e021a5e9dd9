//===- Random.h - random values for the ONNX frontend -----------*- C++ -*-===//
//
// RandomUniform, RandomNormal, their Like forms and Bernoulli (ArrayOps.cpp)
// and Dropout in training mode (NNOps.cpp) draw from tract.random.
//
//===----------------------------------------------------------------------===//

#ifndef FRONTENDS_ONNX_OPS_RANDOM_H
#define FRONTENDS_ONNX_OPS_RANDOM_H

#include "frontends/onnx/NodeContext.h"

namespace mlir::tract::onnx {

/// tract.random of `like`'s shape and `elementType` (a float type; f16 and
/// bf16 are drawn as f32 and cast), seeded by the node's `seed` attribute
/// or, without one, by a hash of its name. Null, with the reason recorded,
/// for a non-float type.
Value randomLike(NodeContext &ctx, Value like, Type elementType,
                 RandomDistribution distribution, double a, double b);

} // namespace mlir::tract::onnx

#endif // FRONTENDS_ONNX_OPS_RANDOM_H
