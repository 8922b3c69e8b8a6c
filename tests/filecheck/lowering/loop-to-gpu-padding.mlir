// RUN: ember-opt %s -p convert-loop-to-gpu | filecheck %s

// A padded input built by fills and a copy marked #ember_gpu.padding: no
// kernel of their own; the convolution's loads read %x at the padded
// index less the copy's offset (1, 1) where that is inside x (10 x 10:
// an index below the offset wraps past 10, unsigned) and the fill's value
// elsewhere. The padded buffer itself is not a kernel argument.

func.func @padded(%x: memref<1x8x10x10xf32>, %w: memref<32x8x3x3xf32>, %y: memref<1x32x10x10xf32>, %arena: memref<4608xi8> {ember.arena}) {
  %c0 = arith.constant 0 : index
  %p = memref.view %arena[%c0][] : memref<4608xi8> to memref<1x8x12x12xf32>
  loop.kernel {
    %top = memref.subview %p[0, 0, 0, 0] [1, 8, 1, 12] [1, 1, 1, 1] : memref<1x8x12x12xf32> to memref<1x8x1x12xf32, strided<[1152, 144, 12, 1]>>
    %zero = arith.constant 0.0 : f32
    linalg.fill {schedule = #ember_gpu.padding} ins(%zero : f32) outs(%top : memref<1x8x1x12xf32, strided<[1152, 144, 12, 1]>>)
    %inner = memref.subview %p[0, 0, 1, 1] [1, 8, 10, 10] [1, 1, 1, 1] : memref<1x8x12x12xf32> to memref<1x8x10x10xf32, strided<[1152, 144, 12, 1], offset: 13>>
    linalg.copy {schedule = #ember_gpu.padding} ins(%x : memref<1x8x10x10xf32>) outs(%inner : memref<1x8x10x10xf32, strided<[1152, 144, 12, 1], offset: 13>>)
    linalg.conv_2d_nchw_fchw {schedule = #ember_gpu.schedule<m = [1], n = [0, 2, 3], k = [4, 5, 6], block = [32, 64], threads = [16, 16], k_tile = 16>, strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%p, %w : memref<1x8x12x12xf32>, memref<32x8x3x3xf32>) outs(%y : memref<1x32x10x10xf32>)
  }
  func.return
}

// CHECK-LABEL: func.func @padded
// CHECK:         "gpu.launch_func"({{.*}}, %w, %y, %x) <{kernel = @ember_kernels::@padded_kernel0
// CHECK-NOT:     "gpu.launch_func"
// CHECK:         "gpu.func"() <{function_type = (memref<32x8x3x3xf32>, memref<1x32x10x10xf32>, memref<1x8x10x10xf32>) -> (), kernel}>
// CHECK-NEXT:    ^bb0(%[[W:.*]]: memref<32x8x3x3xf32>, %[[Y:.*]]: memref<1x32x10x10xf32>, %[[X:.*]]: memref<1x8x10x10xf32>):
// CHECK-NOT:       memref.view
// CHECK:           %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:           scf.for
// CHECK:             %[[H:.*]] = arith.subi %{{.*}}, %[[ONE:.*]] : index
// CHECK-NEXT:        %[[V:.*]] = arith.subi %{{.*}}, %[[ONE]] : index
// CHECK-NEXT:        %[[HIN:.*]] = arith.cmpi ult, %[[H]], %[[TEN:.*]] : index
// CHECK-NEXT:        %[[VIN:.*]] = arith.cmpi ult, %[[V]], %[[TEN]] : index
// CHECK-NEXT:        %[[IN:.*]] = arith.andi %[[HIN]], %[[VIN]] : i1
// CHECK-NEXT:        %[[READ:.*]] = scf.if %[[IN]] -> (f32) {
// CHECK-NEXT:          %[[LOADED:.*]] = memref.load %[[X]][%{{.*}}, %{{.*}}, %[[H]], %[[V]]] : memref<1x8x10x10xf32>
// CHECK-NEXT:          scf.yield %[[LOADED]] : f32
// CHECK-NEXT:        } else {
// CHECK-NEXT:          scf.yield %[[ZERO]] : f32
// CHECK-NEXT:        }
// CHECK-NOT:       linalg.
// CHECK:           "gpu.return"
