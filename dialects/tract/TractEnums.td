#ifndef TRACT_ENUMS_TD
#define TRACT_ENUMS_TD

include "dialects/tract/TractDialect.td"
include "mlir/IR/EnumAttr.td"

def Tract_Reducer : I32EnumAttr<"Reducer", "a reduction", [
    I32EnumAttrCase<"Sum", 0, "sum">,
    I32EnumAttrCase<"Prod", 1, "prod">,
    I32EnumAttrCase<"Min", 2, "min">,
    I32EnumAttrCase<"Max", 3, "max">,
    I32EnumAttrCase<"MeanOfSquares", 4, "mean_of_squares">,
    I32EnumAttrCase<"ArgMax", 5, "argmax">,
    I32EnumAttrCase<"ArgMin", 6, "argmin">,
    I32EnumAttrCase<"All", 7, "all">,
    I32EnumAttrCase<"Any", 8, "any">
  ]> {
  let cppNamespace = "::mlir::tract";
  let genSpecializedAttr = 0;
}

def Tract_PadMode : I32EnumAttr<"PadMode", "how padding fills", [
    I32EnumAttrCase<"Constant", 0, "constant">,
    I32EnumAttrCase<"Reflect", 1, "reflect">,
    I32EnumAttrCase<"Edge", 2, "edge">
  ]> {
  let cppNamespace = "::mlir::tract";
  let genSpecializedAttr = 0;
}

def Tract_Padding : I32EnumAttr<"Padding", "spatial padding of a window op", [
    I32EnumAttrCase<"Valid", 0, "valid">,
    I32EnumAttrCase<"Explicit", 1, "explicit">,
    I32EnumAttrCase<"SameUpper", 2, "same_upper">,
    I32EnumAttrCase<"SameLower", 3, "same_lower">
  ]> {
  let cppNamespace = "::mlir::tract";
  let genSpecializedAttr = 0;
}

def Tract_ScatterReduction : I32EnumAttr<"ScatterReduction",
    "how scattered updates combine with the data", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"Add", 1, "add">,
    I32EnumAttrCase<"Mul", 2, "mul">,
    I32EnumAttrCase<"Min", 3, "min">,
    I32EnumAttrCase<"Max", 4, "max">
  ]> {
  let cppNamespace = "::mlir::tract";
  let genSpecializedAttr = 0;
}

def Tract_CoordTransform : I32EnumAttr<"CoordTransform",
    "how resize maps output coordinates to input ones", [
    I32EnumAttrCase<"HalfPixel", 0, "half_pixel">,
    I32EnumAttrCase<"AlignCorners", 1, "align_corners">,
    I32EnumAttrCase<"Asymmetric", 2, "asymmetric">,
    I32EnumAttrCase<"PytorchHalfPixel", 3, "pytorch_half_pixel">,
    I32EnumAttrCase<"HalfPixelSymmetric", 4, "half_pixel_symmetric">,
    I32EnumAttrCase<"TfHalfPixelForNn", 5, "tf_half_pixel_for_nn">,
    I32EnumAttrCase<"TfCropAndResize", 6, "tf_crop_and_resize">
  ]> {
  let cppNamespace = "::mlir::tract";
  let genSpecializedAttr = 0;
}

def Tract_Interpolator : I32EnumAttr<"Interpolator", "resize interpolation", [
    I32EnumAttrCase<"Nearest", 0, "nearest">,
    I32EnumAttrCase<"Linear", 1, "linear">,
    I32EnumAttrCase<"Cubic", 2, "cubic">
  ]> {
  let cppNamespace = "::mlir::tract";
  let genSpecializedAttr = 0;
}

def Tract_NearestMode : I32EnumAttr<"NearestMode", "rounding of nearest resize", [
    I32EnumAttrCase<"Floor", 0, "floor">,
    I32EnumAttrCase<"Ceil", 1, "ceil">,
    I32EnumAttrCase<"RoundPreferFloor", 2, "round_prefer_floor">,
    I32EnumAttrCase<"RoundPreferCeil", 3, "round_prefer_ceil">
  ]> {
  let cppNamespace = "::mlir::tract";
  let genSpecializedAttr = 0;
}

def Tract_GridPadding : I32EnumAttr<"GridPadding",
    "where grid_sample reads outside its input", [
    I32EnumAttrCase<"Zeros", 0, "zeros">,
    I32EnumAttrCase<"Border", 1, "border">,
    I32EnumAttrCase<"Reflection", 2, "reflection">
  ]> {
  let cppNamespace = "::mlir::tract";
  let genSpecializedAttr = 0;
}

// Enum attributes print by name: `#tract<pad_mode reflect>`.
def Tract_RandomDistribution : I32EnumAttr<"RandomDistribution",
    "the distribution of tract.random", [
    I32EnumAttrCase<"Uniform", 0, "uniform">,
    I32EnumAttrCase<"Normal", 1, "normal">
  ]> {
  let cppNamespace = "::mlir::tract";
  let genSpecializedAttr = 0;
}

def Tract_ReducerAttr : EnumAttr<Tract_Dialect, Tract_Reducer, "reducer">;
def Tract_RandomDistributionAttr : EnumAttr<Tract_Dialect,
    Tract_RandomDistribution, "random_distribution">;
def Tract_PadModeAttr : EnumAttr<Tract_Dialect, Tract_PadMode, "pad_mode">;
def Tract_PaddingAttr : EnumAttr<Tract_Dialect, Tract_Padding, "padding">;
def Tract_ScatterReductionAttr : EnumAttr<Tract_Dialect, Tract_ScatterReduction, "scatter_reduction">;
def Tract_CoordTransformAttr : EnumAttr<Tract_Dialect, Tract_CoordTransform, "coord_transform">;
def Tract_InterpolatorAttr : EnumAttr<Tract_Dialect, Tract_Interpolator, "interpolator">;
def Tract_NearestModeAttr : EnumAttr<Tract_Dialect, Tract_NearestMode, "nearest_mode">;
def Tract_GridPaddingAttr : EnumAttr<Tract_Dialect, Tract_GridPadding, "grid_padding">;

#endif // TRACT_ENUMS_TD
