// RUN: tract-opt %s | FileCheck %s
// Round trip: the printed form parses back to the same IR, in both the
// custom and the generic syntax.
// RUN: tract-opt %s | tract-opt | FileCheck %s
// RUN: tract-opt %s --mlir-print-op-generic | tract-opt | FileCheck %s

// Element-wise operators: result types are inferred with symbolic broadcasting.

// CHECK-LABEL: func.func @unary
// CHECK: tract.abs %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.neg %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.square %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.sign %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.exp %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.ln %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.sqrt %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.rsqrt %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.recip %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.sin %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.cos %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.tan %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.asin %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.acos %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.atan %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.sinh %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.cosh %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.tanh %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.asinh %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.acosh %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.atanh %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.sigmoid %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.erf %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.silu %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.hard_swish %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.gelu_approx %{{[a-zA-Z0-9_#]+}} {fast_impl = true} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.round %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.round_even %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.floor %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.ceil %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.is_nan %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>> -> tensor<1x?x4xi1, #tract.dims<[S]>>
// CHECK: tract.is_inf %{{[a-zA-Z0-9_#]+}} {detect_negative = false} : tensor<1x?x4xf32, #tract.dims<[S]>> -> tensor<1x?x4xi1, #tract.dims<[S]>>
// CHECK: tract.not %{{[a-zA-Z0-9_#]+}} : tensor<3xi1>
// CHECK: tract.bitnot %{{[a-zA-Z0-9_#]+}} : tensor<3xui8>
// CHECK: tract.abs %{{[a-zA-Z0-9_#]+}} : tensor<3xi32>
func.func @unary(%x: tensor<1x?x4xf32, #tract.dims<[S]>>, %i: tensor<3xi32>, %u: tensor<3xui8>, %b: tensor<3xi1>) {
  %0 = tract.abs %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %1 = tract.neg %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %2 = tract.square %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %3 = tract.sign %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %4 = tract.exp %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %5 = tract.ln %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %6 = tract.sqrt %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %7 = tract.rsqrt %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %8 = tract.recip %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %9 = tract.sin %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %10 = tract.cos %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %11 = tract.tan %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %12 = tract.asin %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %13 = tract.acos %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %14 = tract.atan %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %15 = tract.sinh %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %16 = tract.cosh %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %17 = tract.tanh %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %18 = tract.asinh %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %19 = tract.acosh %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %20 = tract.atanh %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %21 = tract.sigmoid %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %22 = tract.erf %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %23 = tract.silu %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %24 = tract.hard_swish %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %25 = tract.gelu_approx %x {fast_impl = true} : tensor<1x?x4xf32, #tract.dims<[S]>>
  %26 = tract.round %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %27 = tract.round_even %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %28 = tract.floor %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %29 = tract.ceil %x : tensor<1x?x4xf32, #tract.dims<[S]>>
  %30 = tract.is_nan %x : tensor<1x?x4xf32, #tract.dims<[S]>> -> tensor<1x?x4xi1, #tract.dims<[S]>>
  %31 = tract.is_inf %x {detect_negative = false} : tensor<1x?x4xf32, #tract.dims<[S]>> -> tensor<1x?x4xi1, #tract.dims<[S]>>
  %32 = tract.not %b : tensor<3xi1>
  %33 = tract.bitnot %u : tensor<3xui8>
  %34 = tract.abs %i : tensor<3xi32>
  return
}

// CHECK-LABEL: func.func @binary
// CHECK: tract.add %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<1x?x4xf32, #tract.dims<[S]>>, tensor<1x1x4xf32>) -> tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.sub %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<1x?x4xf32, #tract.dims<[S]>>, tensor<1x1x4xf32>) -> tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.mul %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<1x1x4xf32>, tensor<1x?x4xf32, #tract.dims<[S]>>) -> tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.div %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<1x?x4xf32, #tract.dims<[S]>>, tensor<1x1x4xf32>) -> tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.rem %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<3xi32>, tensor<1xi32>) -> tensor<3xi32>
// CHECK: tract.pow %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<1x?x4xf32, #tract.dims<[S]>>, tensor<1x1x4xf32>) -> tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.min %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<1x?x4xf32, #tract.dims<[S]>>, tensor<1x1x4xf32>) -> tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.max %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<1x?x4xf32, #tract.dims<[S]>>, tensor<1x1x4xf32>) -> tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.eq %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<1x?x4xf32, #tract.dims<[S]>>, tensor<1x1x4xf32>) -> tensor<1x?x4xi1, #tract.dims<[S]>>
// CHECK: tract.ne %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<3xi32>, tensor<1xi32>) -> tensor<3xi1>
// CHECK: tract.lt %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<3xi32>, tensor<1xi32>) -> tensor<3xi1>
// CHECK: tract.le %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<3xi32>, tensor<1xi32>) -> tensor<3xi1>
// CHECK: tract.gt %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<1x?x4xf32, #tract.dims<[S]>>, tensor<1x1x4xf32>) -> tensor<1x?x4xi1, #tract.dims<[S]>>
// CHECK: tract.ge %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<1x?x4xf32, #tract.dims<[S]>>, tensor<1x1x4xf32>) -> tensor<1x?x4xi1, #tract.dims<[S]>>
// CHECK: tract.and %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
// CHECK: tract.or %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
// CHECK: tract.xor %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
// CHECK: tract.bitand %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<3xi32>, tensor<1xi32>) -> tensor<3xi32>
// CHECK: tract.bitor %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<3xi32>, tensor<1xi32>) -> tensor<3xi32>
// CHECK: tract.bitxor %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<3xi32>, tensor<1xi32>) -> tensor<3xi32>
// CHECK: tract.shl %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<3xi32>, tensor<1xi32>) -> tensor<3xi32>
// CHECK: tract.shr %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<3xi32>, tensor<1xi32>) -> tensor<3xi32>
// CHECK: tract.select %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}}, %{{[a-zA-Z0-9_#]+}} : (tensor<1x?x4xi1, #tract.dims<[S]>>, tensor<1x?x4xf32, #tract.dims<[S]>>, tensor<1x1x4xf32>) -> tensor<1x?x4xf32, #tract.dims<[S]>>
// CHECK: tract.cast %{{[a-zA-Z0-9_#]+}} : tensor<1x?x4xf32, #tract.dims<[S]>> to tensor<1x?x4xf16, #tract.dims<[S]>>
// CHECK: tract.cast %{{[a-zA-Z0-9_#]+}} : tensor<3xi32> to tensor<3xui8>
func.func @binary(%x: tensor<1x?x4xf32, #tract.dims<[S]>>, %y: tensor<1x1x4xf32>, %i: tensor<3xi32>, %j: tensor<1xi32>, %b: tensor<3xi1>, %c: tensor<3xi1>) {
  %0 = tract.add %x, %y : (tensor<1x?x4xf32, #tract.dims<[S]>>, tensor<1x1x4xf32>) -> tensor<1x?x4xf32, #tract.dims<[S]>>
  %1 = tract.sub %x, %y : (tensor<1x?x4xf32, #tract.dims<[S]>>, tensor<1x1x4xf32>) -> tensor<1x?x4xf32, #tract.dims<[S]>>
  %2 = tract.mul %y, %x : (tensor<1x1x4xf32>, tensor<1x?x4xf32, #tract.dims<[S]>>) -> tensor<1x?x4xf32, #tract.dims<[S]>>
  %3 = tract.div %x, %y : (tensor<1x?x4xf32, #tract.dims<[S]>>, tensor<1x1x4xf32>) -> tensor<1x?x4xf32, #tract.dims<[S]>>
  %4 = tract.rem %i, %j : (tensor<3xi32>, tensor<1xi32>) -> tensor<3xi32>
  %5 = tract.pow %x, %y : (tensor<1x?x4xf32, #tract.dims<[S]>>, tensor<1x1x4xf32>) -> tensor<1x?x4xf32, #tract.dims<[S]>>
  %6 = tract.min %x, %y : (tensor<1x?x4xf32, #tract.dims<[S]>>, tensor<1x1x4xf32>) -> tensor<1x?x4xf32, #tract.dims<[S]>>
  %7 = tract.max %x, %y : (tensor<1x?x4xf32, #tract.dims<[S]>>, tensor<1x1x4xf32>) -> tensor<1x?x4xf32, #tract.dims<[S]>>
  %8 = tract.eq %x, %y : (tensor<1x?x4xf32, #tract.dims<[S]>>, tensor<1x1x4xf32>) -> tensor<1x?x4xi1, #tract.dims<[S]>>
  %9 = tract.ne %i, %j : (tensor<3xi32>, tensor<1xi32>) -> tensor<3xi1>
  %10 = tract.lt %i, %j : (tensor<3xi32>, tensor<1xi32>) -> tensor<3xi1>
  %11 = tract.le %i, %j : (tensor<3xi32>, tensor<1xi32>) -> tensor<3xi1>
  %12 = tract.gt %x, %y : (tensor<1x?x4xf32, #tract.dims<[S]>>, tensor<1x1x4xf32>) -> tensor<1x?x4xi1, #tract.dims<[S]>>
  %13 = tract.ge %x, %y : (tensor<1x?x4xf32, #tract.dims<[S]>>, tensor<1x1x4xf32>) -> tensor<1x?x4xi1, #tract.dims<[S]>>
  %14 = tract.and %b, %c : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  %15 = tract.or %b, %c : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  %16 = tract.xor %b, %c : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  %17 = tract.bitand %i, %j : (tensor<3xi32>, tensor<1xi32>) -> tensor<3xi32>
  %18 = tract.bitor %i, %j : (tensor<3xi32>, tensor<1xi32>) -> tensor<3xi32>
  %19 = tract.bitxor %i, %j : (tensor<3xi32>, tensor<1xi32>) -> tensor<3xi32>
  %20 = tract.shl %i, %j : (tensor<3xi32>, tensor<1xi32>) -> tensor<3xi32>
  %21 = tract.shr %i, %j : (tensor<3xi32>, tensor<1xi32>) -> tensor<3xi32>
  %22 = tract.select %8, %x, %y : (tensor<1x?x4xi1, #tract.dims<[S]>>, tensor<1x?x4xf32, #tract.dims<[S]>>, tensor<1x1x4xf32>) -> tensor<1x?x4xf32, #tract.dims<[S]>>
  %23 = tract.cast %x : tensor<1x?x4xf32, #tract.dims<[S]>> to tensor<1x?x4xf16, #tract.dims<[S]>>
  %24 = tract.cast %i : tensor<3xi32> to tensor<3xui8>
  return
}

