// RUN: ember-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Each case is one loop op that breaks a rule of its verifier. With
// --verify-diagnostics, ember-opt prints each chunk's diagnostic next to the
// (generic) IR and goes on with the next chunk; every case checks that its
// function is the one reported, and the exact message.

// for: the step is positive (0 would never end).
func.func @for_step_zero(%b: memref<4xf32>) {
  loop.for %i = 0 to 4 step 0 {
    %x = memref.load %b[%i] : memref<4xf32>
  }
  func.return
}

// CHECK:      sym_name = "for_step_zero"
// CHECK:      Operation does not verify: loop.for: step must be positive, got 0

// -----

// for: a negative step is rejected too (loops only count up).
func.func @for_step_negative(%b: memref<4xf32>) {
  loop.for %i = 4 to 4 step -1 {
    %x = memref.load %b[%i] : memref<4xf32>
  }
  func.return
}

// CHECK:      sym_name = "for_step_negative"
// CHECK:      Operation does not verify: loop.for: step must be positive, got -1

// -----

// for: lower <= upper (an empty range is written lower == upper).
func.func @for_bounds(%b: memref<4xf32>) {
  loop.for %i = 4 to 0 step 1 {
    %x = memref.load %b[%i] : memref<4xf32>
  }
  func.return
}

// CHECK:      sym_name = "for_bounds"
// CHECK:      Operation does not verify: loop.for: lower bound 4 exceeds upper bound 0

// -----

// for (generic form): the body takes exactly one index argument.
func.func @for_body_arg(%b: memref<4xf32>) {
  "loop.for"() <{lower = 0 : i64, upper = 4 : i64, step = 1 : i64}> ({
  ^bb0(%i: i64):
    "loop.yield"() : () -> ()
  }) : () -> ()
  func.return
}

// CHECK:      sym_name = "for_body_arg"
// CHECK:      Operation does not verify: loop.for: the body takes one index argument

// -----

// for (generic form): the body ends in loop.yield, not another terminator.
func.func @for_terminator(%b: memref<4xf32>) {
  "loop.for"() <{lower = 0 : i64, upper = 4 : i64, step = 1 : i64}> ({
  ^bb0(%i: index):
    "tensor.yield"() : () -> ()
  }) : () -> ()
  func.return
}

// CHECK:      sym_name = "for_terminator"
// CHECK:      Operation does not verify: loop.for: the body must end in loop.yield

// -----

// alloc: the buffer has a static shape (the arena needs its size).
func.func @alloc_dynamic() {
  %a = loop.alloc : memref<?x4xf32>
  func.return
}

// CHECK:      sym_name = "alloc_dynamic"
// CHECK:      Operation does not verify: loop.alloc: result must be a static memref, got memref<?x4xf32>

// -----

// weight: a static buffer too.
func.func @weight_dynamic() {
  %w = loop.weight dense<1.000000e+00> : tensor<4xf32> -> memref<?xf32>
  func.return
}

// CHECK:      sym_name = "weight_dynamic"
// CHECK:      Operation does not verify: loop.weight: result must be a static memref, got memref<?xf32>

// -----

// weight: the value and the buffer have one shape (4 vs 2x2).
func.func @weight_shape() {
  %w = loop.weight dense<1.000000e+00> : tensor<4xf32> -> memref<2x2xf32>
  func.return
}

// CHECK:      sym_name = "weight_shape"
// CHECK:      Operation does not verify: loop.weight: the value and the buffer must have one type

// -----

// weight: ... and one element type (f32 vs f16).
func.func @weight_element_type() {
  %w = loop.weight dense<1.000000e+00> : tensor<4xf32> -> memref<4xf16>
  func.return
}

// CHECK:      sym_name = "weight_element_type"
// CHECK:      Operation does not verify: loop.weight: the value and the buffer must have one type

// -----

// reshape: a view holds the same bytes (4x8 f32 = 128 bytes, 30 f32 = 120).
func.func @reshape_bytes(%b: memref<4x8xf32>) {
  %v = loop.reshape %b : memref<4x8xf32> -> memref<30xf32>
  func.return
}

// CHECK:      sym_name = "reshape_bytes"
// CHECK:      Operation does not verify: loop.reshape: the two shapes must hold the same bytes

// -----

// reshape: bytes, not elements, must agree (32 x f32 is 128 bytes, 32 x f16 is 64).
func.func @reshape_element_bytes(%b: memref<4x8xf32>) {
  %v = loop.reshape %b : memref<4x8xf32> -> memref<32xf16>
  func.return
}

// CHECK:      sym_name = "reshape_element_bytes"
// CHECK:      Operation does not verify: loop.reshape: the two shapes must hold the same bytes
