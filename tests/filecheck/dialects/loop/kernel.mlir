// RUN: ember-opt %s | ember-opt | filecheck %s
// RUN: ember-opt %s --print-op-generic | ember-opt | filecheck %s

// loop.kernel on tensors: a kind, results, and a region that uses values
// from around it (%x, %c2) directly and ends in loop.yield.
func.func @on_tensors(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c2 = arith.constant 2.000000e+00 : f32
  %r:2 = loop.kernel "elementwise" -> (tensor<4xf32>, tensor<4xf32>) {
    %e = tensor.empty() : tensor<4xf32>
    %f = linalg.fill ins(%c2 : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    loop.yield %f, %x : tensor<4xf32>, tensor<4xf32>
  }
  func.return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @on_tensors(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
// CHECK-NEXT:    %c2 = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:    %r, %r_1 = loop.kernel "elementwise" -> (tensor<4xf32>, tensor<4xf32>) {
// CHECK-NEXT:      %e = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:      %f = linalg.fill ins(%c2 : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:      loop.yield %f, %x : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r, %r_1 : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT:  }

// loop.kernel on buffers: no results, and the empty terminator is implicit;
// no kind, and other attributes (room for a schedule) after `attributes`.
func.func @on_buffers(%a: memref<4xf32>, %out0: memref<4xf32>) {
  %k0 = arith.constant 0 : index
  %k1 = arith.constant 1 : index
  %k4 = arith.constant 4 : index
  loop.kernel {
    scf.for %i = %k0 to %k4 step %k1 {
      %v = memref.load %a[%i] : memref<4xf32>
      memref.store %v, %out0[%i] : memref<4xf32>
    }
  }
  loop.kernel "conv" attributes {note = "kept"} {
    %t = memref.alloc() : memref<4xf32>
    scf.for %i = %k0 to %k4 step %k1 {
      %v = memref.load %a[%i] : memref<4xf32>
      memref.store %v, %t[%i] : memref<4xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @on_buffers(%a: memref<4xf32>, %out0: memref<4xf32>) {
// CHECK:         loop.kernel {
// CHECK-NEXT:      scf.for %i = %k0 to %k4 step %k1 {
// CHECK-NEXT:        %v = memref.load %a[%i] : memref<4xf32>
// CHECK-NEXT:        memref.store %v, %out0[%i] : memref<4xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.kernel "conv" attributes {note = "kept"} {
// CHECK-NEXT:      %t = memref.alloc() : memref<4xf32>
// CHECK-NEXT:      scf.for
// CHECK:           }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
