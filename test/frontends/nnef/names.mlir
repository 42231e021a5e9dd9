// Graph inputs and outputs whose names NNEF identifiers cannot spell are
// renamed, their original names kept in a property the reader gives back.
// RUN: rm -rf %t && tract-translate --export-nnef %s --nnef-output %t -o /dev/null
// RUN: FileCheck %s --check-prefix=NNEF < %t/graph.nnef
// RUN: tract-translate --import-nnef %t/graph.nnef | FileCheck %s --check-prefix=IR

// NNEF:      ("tract_mlir_io_names", {{\[\["input_0", "input\.0"\], \["out_0", "out:0"\]\]}})
// NNEF:      graph network(input_0, plain) -> (out_0, plain_out) {
// NNEF:        out_0 = add;
// NNEF-NEXT:   plain_out = mul;

// IR:     module {
// IR-NEXT:  func.func @main(%arg0: tensor<2xf32> {tract.name = "input.0"}, %arg1: tensor<2xf32> {tract.name = "plain"}) -> (tensor<2xf32> {tract.name = "out:0"}, tensor<2xf32> {tract.name = "plain_out"})

func.func @main(%x: tensor<2xf32> {tract.name = "input.0"}, %y: tensor<2xf32> {tract.name = "plain"}) -> (tensor<2xf32> {tract.name = "out:0"}, tensor<2xf32> {tract.name = "plain_out"}) {
  %0 = tract.add %x, %y : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = tract.mul %x, %y : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0, %1 : tensor<2xf32>, tensor<2xf32>
}
