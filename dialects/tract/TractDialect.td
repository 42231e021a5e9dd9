#ifndef TRACT_DIALECT_TD
#define TRACT_DIALECT_TD

include "mlir/IR/OpBase.td"

def Tract_Dialect : Dialect {
  let name = "tract";
  let summary = "tract-opl: the operator set of the tract inference engine";
  let description = [{
    The `tract` dialect models a neural network the way the tract engine
    sees it after import: a small set of operators close to NNEF and to
    tract's core (einsum, conv, pools, axis ops, element-wise families,
    reductions, scans, pulse ops). ONNX- and NNEF-only spellings are
    translated by the frontends and never appear here.

    Module attributes carry what tract keeps beside the graph:

    * `tract.symbols = ["S", "P"]`: the symbols of the model; when present,
      every symbol in a shape must be declared there;
    * `tract.assertions = ["S >= 1", "S+P < 4096"]`: facts that always hold;
    * `tract.scenarios = {tg = ["S == 1"]}`: facts that hold in a named
      scenario only;
    * `tract.properties = {...}`: model properties, any attributes.

    Values are ranked tensors of builtin element types, or of quantized
    integers (`!quant.uniform<u8:f32, 0.5:128>`: tract's QU8, QI8 and QI32,
    a real value being `scale * (q - zero_point)`). Element-wise binary
    operators broadcast numpy-style over operands of *equal rank*: frontends
    make rank changes explicit with axis operators.
  }];
  let cppNamespace = "::mlir::tract";
  let dependentDialects = ["::mlir::quant::QuantDialect"];
  let hasConstantMaterializer = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class Tract_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tract_Dialect, mnemonic, traits>;

#endif // TRACT_DIALECT_TD
