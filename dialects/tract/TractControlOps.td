//===- TractControlOps.td - scan, if and their terminator -----------------===//

def Tract_YieldOp : Tract_Op<"yield", [Pure, Terminator, ReturnLike,
    ParentOneOf<["ScanOp", "IfOp"]>]> {
  let summary = "the results of a scan or if body";
  let description = [{
    Ends the body of a `tract.scan` or a region of a `tract.if`; its operands are the region's results.
  }];
  let arguments = (ins Variadic<Tract_Tensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let builders = [OpBuilder<(ins), [{ /* nothing to yield */ }]>];
}

def Tract_ScanOp : Tract_Op<"scan", [DeclareOpInterfaceMethods<Tract_PulsifyOpInterface>, RecursiveMemoryEffects, DeclareOpInterfaceMethods<Tract_CostOpInterface>,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "a loop over chunks of its inputs, with carried state";
  let description = [{
    Operands are, in order: `num_states` initial states, one scanned input
    per entry of `scan_axes`, then full inputs. Each iteration the body
    receives the current states, a chunk of `|chunk|` elements of each
    scanned input along its axis (from the end when the chunk is negative),
    and the full inputs; it yields the next states, then one chunk per entry
    of `output_axes`. Results are the final states, then the scanned outputs
    concatenated along their axes. LSTM, GRU and RNN are scans.

    ```mlir
    %h, %ys = tract.scan %h0, %xs attributes {num_states = 1 : i64, scan_axes = array<i64: 0>,
                                              scan_chunks = array<i64: 1>, output_axes = array<i64: 0>} {
    ^bb0(%h: tensor<1x4xf32>, %x: tensor<1x4xf32>):
      %n = tract.add %h, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
      tract.yield %n, %n : tensor<1x4xf32>, tensor<1x4xf32>
    } : (tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>)
      -> (tensor<1x4xf32>, tensor<?x4xf32, #tract.dims<[S]>>)
    ```
  }];
  let arguments = (ins Variadic<Tract_Tensor>:$inputs,
                   ConfinedAttr<I64Attr, [IntNonNegative]>:$num_states,
                   DenseI64ArrayAttr:$scan_axes, DenseI64ArrayAttr:$scan_chunks,
                   DenseI64ArrayAttr:$output_axes);
  let results = (outs Variadic<Tract_Tensor>:$outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $inputs attr-dict-with-keyword $body `:` functional-type($inputs, results)
  }];
  let extraClassDeclaration = [{
    /// Whether the body runs once: there are scanned inputs and each is a
    /// single chunk (the body sees it whole).
    bool runsOnce();
  }];
  let hasRegionVerifier = 1;
}

def Tract_IfOp : Tract_Op<"if", [RecursiveMemoryEffects, DeclareOpInterfaceMethods<Tract_CostOpInterface>,
    SingleBlockImplicitTerminator<"YieldOp">, NoRegionArguments]> {
  let summary = "choose one of two regions by a scalar condition";
  let description = [{
    `cond` is a boolean tensor of one element. Both regions yield values of
    the result types. Values defined above are visible inside.

    `then_assertions` and `else_assertions` are relations between dims (as
    the module's `tract.assertions`) that the ops of a branch rely on, such
    as `(S+320)/512 == 1` for an axis it squeezes: they only hold when that
    branch runs, and are checked when it is taken.
  }];
  let arguments = (ins Tract_BoolTensor:$cond,
                   OptionalAttr<StrArrayAttr>:$then_assertions,
                   OptionalAttr<StrArrayAttr>:$else_assertions);
  let results = (outs Variadic<Tract_Tensor>:$outputs);
  let regions = (region SizedRegion<1>:$then_region, SizedRegion<1>:$else_region);
  let assemblyFormat = [{
    $cond `:` type($cond) (`->` type($outputs)^)? $then_region `else` $else_region attr-dict
  }];
  let hasRegionVerifier = 1;
}
