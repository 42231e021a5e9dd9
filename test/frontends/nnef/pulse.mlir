// tract's pulse extensions and the properties the pulsify pass records:
// export, import, export again and import again give the same IR.
// RUN: rm -rf %t.a %t.b
// RUN: tract-translate --export-nnef %s --nnef-output %t.a -o /dev/null
// RUN: FileCheck %s --check-prefix=NNEF < %t.a/graph.nnef
// RUN: tract-translate --import-nnef %t.a/graph.nnef -o %t.a.mlir
// RUN: FileCheck %s --check-prefix=IR < %t.a.mlir
// RUN: tract-translate --export-nnef %t.a.mlir --nnef-output %t.b -o /dev/null
// RUN: tract-translate --import-nnef %t.b/graph.nnef -o %t.b.mlir
// RUN: diff %t.a.mlir %t.b.mlir

// NNEF:      extension tract_registry tract_pulse;
// NNEF-NEXT: extension tract_symbol S;
// NNEF:      fragment tract_core_properties(
// NNEF:        properties = [("pulse.delay", [0, 3, 0]), ("pulse.input_axes", [1]), ("pulse.output_axes", [1, 1, 1]), ("pulse.output_lengths", ["S", "S+4", "S+4"]), ("pulse.pulse", 8), ("pulse.symbol", "S"), ("tract_nnef_ser_version", "{{.*}}"), ("tract_nnef_format_version", "beta1")];
// NNEF:      graph network(x) -> (masked, padded, edge) {
// NNEF:        delay = tract_pulse_delay(x, axis = 1, delay = 3, overlap = 2);
// NNEF-NEXT:   pulse_pad = tract_pulse_pulse_pad(delay, axis = 1, before = 2, after = 2, begin_input = 3, end_input = S+3, border = "constant", value = -1.0 / 0.0, overlap = 2);
// NNEF-NEXT:   pulse_pad_1 = tract_pulse_pulse_pad(x, axis = 1, before = 2, after = 2, begin_input = 0, end_input = S, border = "replicate", overlap = 0);
// NNEF-NEXT:   pulse_mask = tract_pulse_mask(x, axis = 1, begin = 0, end = S, value = 0.5);
// NNEF-NEXT:   masked = pulse_mask;
// NNEF-NEXT:   padded = pulse_pad;
// NNEF-NEXT:   edge = pulse_pad_1;

// IR: module attributes {tract.properties = {pulse.delay = [0, 3, 0], pulse.input_axes = [1], pulse.output_axes = [1, 1, 1], pulse.output_lengths = ["S", "S+4", "S+4"], pulse.pulse = 8 : i64, pulse.symbol = "S"}, tract.symbols = ["S"]}
// IR: %[[D:.*]] = tract.delay %arg0 {axis = 1 : i64, delay = 3 : i64, overlap = 2 : i64} : tensor<1x8x4xf32> -> tensor<1x10x4xf32>
// IR: tract.pulse_pad %[[D]] {after = #tract.dim<2>, axis = 1 : i64, before = 2 : i64, begin_input = 3 : i64, end_input = #tract.dim<S+3>, overlap = 2 : i64, value = 0xFF800000 : f32} : tensor<1x10x4xf32> -> tensor<1x10x4xf32>
// IR: tract.pulse_pad %arg0 {after = #tract.dim<2>, axis = 1 : i64, before = 2 : i64, begin_input = 0 : i64, end_input = #tract.dim<S>, mode = #tract<pad_mode edge>} : tensor<1x8x4xf32> -> tensor<1x8x4xf32>
// IR: tract.pulse_mask %arg0 {axis = 1 : i64, begin = 0 : i64, end = #tract.dim<S>, value = 5.000000e-01 : f32} : tensor<1x8x4xf32> -> tensor<1x8x4xf32>

module attributes {tract.symbols = ["S"], tract.properties = {"pulse.delay" = [0, 3, 0], "pulse.input_axes" = [1], "pulse.output_axes" = [1, 1, 1], "pulse.output_lengths" = ["S", "S+4", "S+4"], "pulse.symbol" = "S", "pulse.pulse" = 8 : i64}} {
  func.func @main(%x: tensor<1x8x4xf32> {tract.name = "x"}) -> (tensor<1x8x4xf32> {tract.name = "masked"}, tensor<1x10x4xf32> {tract.name = "padded"}, tensor<1x8x4xf32> {tract.name = "edge"}) {
    %d = tract.delay %x {axis = 1 : i64, delay = 3 : i64, overlap = 2 : i64} : tensor<1x8x4xf32> -> tensor<1x10x4xf32>
    %p = tract.pulse_pad %d {axis = 1 : i64, before = 2 : i64, after = #tract.dim<2>, begin_input = 3 : i64, end_input = #tract.dim<S+3>, mode = #tract<pad_mode constant>, value = 0xFF800000 : f32, overlap = 2 : i64} : tensor<1x10x4xf32> -> tensor<1x10x4xf32>
    %e = tract.pulse_pad %x {axis = 1 : i64, before = 2 : i64, after = #tract.dim<2>, begin_input = 0 : i64, end_input = #tract.dim<S>, mode = #tract<pad_mode edge>} : tensor<1x8x4xf32> -> tensor<1x8x4xf32>
    %m = tract.pulse_mask %x {axis = 1 : i64, begin = 0 : i64, end = #tract.dim<S>, value = 5.000000e-01 : f32} : tensor<1x8x4xf32> -> tensor<1x8x4xf32>
    return %m, %p, %e : tensor<1x8x4xf32>, tensor<1x10x4xf32>, tensor<1x8x4xf32>
  }
}
