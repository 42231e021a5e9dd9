#ifndef TRACT_ATTRS_TD
#define TRACT_ATTRS_TD

include "dialects/tract/TractDialect.td"
include "mlir/IR/AttrTypeBase.td"

class Tract_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Tract_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Tract_DimsAttr : Tract_Attr<"Dims", "dims"> {
  // The storage owns its TDims (see TDimListStorage in TractAttrs.cpp).
  let storageClass = "TDimListStorage";
  let genStorageClass = 0;
  let summary = "symbolic expressions of a tensor's dynamic dims";
  let description = [{
    The encoding of a tensor type with dynamic dims: one TDim expression per
    `?`, in order, so that symbolic shapes are visible in the IR text.

    ```mlir
    tensor<1x?x64xf32, #tract.dims<[S]>>
    tensor<1x8x?x64xf16, #tract.dims<[S+P]>>
    tensor<?xf32, #tract.dims<[(S-3)/4+1]>>
    ```

    Expressions are held in canonical form, so equal shapes are equal types.
    A constant is never an expression here: a dim known to be constant is a
    static dim of the type. Broadcasts (`S#P`) are written as quoted strings,
    since `#` starts an attribute alias in MLIR's syntax.
  }];
  let parameters = (ins
    ArrayRefParameter<"::mlir::tract::TDim", "one expression per dynamic dim">:$dims
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def Tract_DimAttr : Tract_Attr<"Dim", "dim"> {
  let summary = "one symbolic dimension";
  let description = [{
    A TDim used as an op attribute, constant or symbolic: the bounds of a
    slice, a pulse delay, a length.

    ```mlir
    start = #tract.dim<0>, end = #tract.dim<S-3>
    ```
  }];
  let parameters = (ins "::mlir::tract::TDim":$value);
  let hasCustomAssemblyFormat = 1;
  let builders = [
    AttrBuilder<(ins "int64_t":$value), [{
      return $_get($_ctxt, ::mlir::tract::TDim(value));
    }]>
  ];
}

def Tract_ShapeAttr : Tract_Attr<"Shape", "shape"> {
  // The storage owns its TDims (see TDimListStorage in TractAttrs.cpp).
  let storageClass = "TDimListStorage";
  let genStorageClass = 0;
  let summary = "a list of symbolic dimensions";
  let description = [{
    A list of TDims used as an op attribute, constant or symbolic: the target
    shape of a broadcast or a reshape, tile multipliers, resize sizes.

    ```mlir
    to = #tract.shape<[S, 4, 16]>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"::mlir::tract::TDim", "dims">:$dims
  );
  let hasCustomAssemblyFormat = 1;
}

#endif // TRACT_ATTRS_TD
