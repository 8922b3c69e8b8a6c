// RUN: ember-opt %s --split-input-file --verify-diagnostics | filecheck %s

// TfIdfVectorizer's shape rule names the broken rule.

// Token ids are int32 or int64.
func.func @float_tokens(%x: tensor<5xf32>) -> tensor<2xf32> {
  %y = graph.tf_idf_vectorizer %x {max_gram_length = 1 : i64, max_skip_count = 0 : i64, min_gram_length = 1 : i64, mode = "TF", ngram_counts = array<i64: 0>, ngram_indexes = array<i64: 0, 1>, pool_int64s = array<i64: 3, 4>} : (tensor<5xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// CHECK:      Operation does not verify: graph.tf_idf_vectorizer: X must be an int32 or int64 tensor, got tensor<5xf32>

// -----

// The pool must not repeat an n-gram (onnxruntime refuses it too).
func.func @repeated(%x: tensor<5xi64>) -> tensor<2xf32> {
  %y = graph.tf_idf_vectorizer %x {max_gram_length = 1 : i64, max_skip_count = 0 : i64, min_gram_length = 1 : i64, mode = "TF", ngram_counts = array<i64: 0>, ngram_indexes = array<i64: 0, 1>, pool_int64s = array<i64: 3, 3>} : (tensor<5xi64>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// CHECK:      Operation does not verify: graph.tf_idf_vectorizer: pool_int64s repeats the 1-gram [3]

// -----

// Y has max(ngram_indexes) + 1 columns.
func.func @columns(%x: tensor<2x5xi64>) -> tensor<2x2xf32> {
  %y = graph.tf_idf_vectorizer %x {max_gram_length = 1 : i64, max_skip_count = 0 : i64, min_gram_length = 1 : i64, mode = "TF", ngram_counts = array<i64: 0>, ngram_indexes = array<i64: 0, 2>, pool_int64s = array<i64: 3, 4>} : (tensor<2x5xi64>) -> tensor<2x2xf32>
  func.return %y : tensor<2x2xf32>
}

// CHECK:      Operation does not verify: graph.tf_idf_vectorizer: result #0 has type tensor<2x2xf32>, but the operands imply tensor<2x3xf32>
