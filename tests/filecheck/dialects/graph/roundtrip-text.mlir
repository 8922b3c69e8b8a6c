// RUN: ember-opt %s | ember-opt | filecheck %s

// The text op TfIdfVectorizer (ops_text.py): 1-D and 2-D token ids, its
// n-gram pool as attributes; Y has max(ngram_indexes) + 1 columns.

func.func @tfidf(%x: tensor<2x5xi32>, %v: tensor<7xi64>) -> (tensor<2x4xf32>, tensor<6xf32>) {
  %y = graph.tf_idf_vectorizer %x {max_gram_length = 2 : i64, max_skip_count = 1 : i64, min_gram_length = 1 : i64, mode = "TFIDF", ngram_counts = array<i64: 0, 2>, ngram_indexes = array<i64: 0, 1, 2, 3>, pool_int64s = array<i64: 7, 8, 7, 8, 8, 9>, weights = array<f32: 1.000000e+00, 2.000000e+00, 5.000000e-01, 4.000000e+00>} : (tensor<2x5xi32>) -> tensor<2x4xf32>
  %w = graph.tf_idf_vectorizer %v {max_gram_length = 1 : i64, max_skip_count = 0 : i64, min_gram_length = 1 : i64, mode = "TF", ngram_counts = array<i64: 0>, ngram_indexes = array<i64: 5, 0>, pool_int64s = array<i64: 3, 4>} : (tensor<7xi64>) -> tensor<6xf32>
  func.return %y, %w : tensor<2x4xf32>, tensor<6xf32>
}

// CHECK-LABEL: func.func @tfidf
// CHECK-NEXT: %y = graph.tf_idf_vectorizer %x {max_gram_length = 2 : i64, max_skip_count = 1 : i64, min_gram_length = 1 : i64, mode = "TFIDF", ngram_counts = array<i64: 0, 2>, ngram_indexes = array<i64: 0, 1, 2, 3>, pool_int64s = array<i64: 7, 8, 7, 8, 8, 9>, weights = array<f32: 1.000000e+00, 2.000000e+00, 5.000000e-01, 4.000000e+00>} : (tensor<2x5xi32>) -> tensor<2x4xf32>
// CHECK-NEXT: %w = graph.tf_idf_vectorizer %v {max_gram_length = 1 : i64, max_skip_count = 0 : i64, min_gram_length = 1 : i64, mode = "TF", ngram_counts = array<i64: 0>, ngram_indexes = array<i64: 5, 0>, pool_int64s = array<i64: 3, 4>} : (tensor<7xi64>) -> tensor<6xf32>
