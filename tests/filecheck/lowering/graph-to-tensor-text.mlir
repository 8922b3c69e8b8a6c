// RUN: ember-opt %s -p convert-graph-to-tensor | filecheck %s

// TfIdfVectorizer (TFIDF, unigrams and bigrams, one skip): Y is filled
// with 0; the unigrams (columns 0 and 1) are one generic over x itself,
// the bigrams (columns 2 and 3) one generic per skip distance, each window
// token read from a slice of x. The pool is a constant table read at
// (column, entry, j); each match adds its n-gram's weight.
func.func @tfidf(%x: tensor<2x5xi32>) -> tensor<2x4xf32> {
  %y = graph.tf_idf_vectorizer %x {max_gram_length = 2 : i64, max_skip_count = 1 : i64, min_gram_length = 1 : i64, mode = "TFIDF", ngram_counts = array<i64: 0, 2>, ngram_indexes = array<i64: 0, 1, 2, 3>, pool_int64s = array<i64: 7, 8, 7, 8, 8, 9>, weights = array<f32: 1.0, 2.0, 0.5, 4.0>} : (tensor<2x5xi32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @tfidf
// CHECK:      %[[ZERO:.*]] = linalg.fill
// CHECK-NEXT: %[[UNI:.*]] = tensor.extract_slice %[[ZERO]][0, 0] [2, 2] [1, 1] : tensor<2x4xf32> to tensor<2x2xf32>
// CHECK-NEXT: %[[UNIGRAMS:.*]] = graph.constant dense<{{\[\[\[}}7]], {{\[\[}}8]]]> : tensor<2x1x1xi32>
// CHECK-NEXT: %[[UNIWEIGHTS:.*]] = graph.constant dense<{{\[\[}}1.000000e+00], [2.000000e+00]]> : tensor<2x1xf32>
// CHECK-NEXT: %[[U:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3)>, affine_map<(d0, d1, d2, d3) -> (d1, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x, %[[UNIGRAMS]], %[[UNIWEIGHTS]] : tensor<2x5xi32>, tensor<2x1x1xi32>, tensor<2x1xf32>) outs(%[[UNI]] : tensor<2x2xf32>)
// CHECK:        %[[HIT:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : i32
// CHECK:        %[[SCORE:.*]] = arith.select %[[HIT]], %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:   arith.addf %{{.*}}, %[[SCORE]] : f32
// CHECK:      %[[Y1:.*]] = tensor.insert_slice %[[U]] into %[[ZERO]][0, 0] [2, 2] [1, 1]
// CHECK-NEXT: %[[BI:.*]] = tensor.extract_slice %[[Y1]][0, 2] [2, 2] [1, 1] : tensor<2x4xf32> to tensor<2x2xf32>
// CHECK-NEXT: %[[BIGRAMS:.*]] = graph.constant dense<{{\[\[\[}}7, 8]], {{\[\[}}8, 9]]]> : tensor<2x1x2xi32>
// CHECK-NEXT: %[[BIWEIGHTS:.*]] = graph.constant dense<{{\[\[}}5.000000e-01], [4.000000e+00]]> : tensor<2x1xf32>
// CHECK-NEXT: %[[A1:.*]] = tensor.extract_slice %x[0, 0] [2, 4] [1, 1] : tensor<2x5xi32> to tensor<2x4xi32>
// CHECK-NEXT: %[[B1:.*]] = tensor.extract_slice %x[0, 1] [2, 4] [1, 1] : tensor<2x5xi32> to tensor<2x4xi32>
// CHECK-NEXT: %[[ADJACENT:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3)>, affine_map<(d0, d1, d2, d3) -> (d1, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d1, d2, 1)>, affine_map<(d0, d1, d2, d3) -> (d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[A1]], %[[B1]], %[[BIGRAMS]], %[[BIGRAMS]], %[[BIWEIGHTS]] : {{.*}}) outs(%[[BI]] : tensor<2x2xf32>)
// CHECK:        %[[FIRST:.*]] = arith.cmpi eq
// CHECK-NEXT:   %[[SECOND:.*]] = arith.cmpi eq
// CHECK-NEXT:   arith.andi %[[FIRST]], %[[SECOND]] : i1
// CHECK:      %[[A2:.*]] = tensor.extract_slice %x[0, 0] [2, 3] [1, 1] : tensor<2x5xi32> to tensor<2x3xi32>
// CHECK-NEXT: %[[B2:.*]] = tensor.extract_slice %x[0, 2] [2, 3] [1, 1] : tensor<2x5xi32> to tensor<2x3xi32>
// CHECK-NEXT: %[[SKIPPING:.*]] = linalg.generic {{.*}} ins(%[[A2]], %[[B2]], %[[BIGRAMS]], %[[BIGRAMS]], %[[BIWEIGHTS]] : {{.*}}) outs(%[[ADJACENT]] : tensor<2x2xf32>)
// CHECK:      %y = tensor.insert_slice %[[SKIPPING]] into %[[Y1]][0, 2] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x4xf32>
// CHECK-NEXT: func.return %y

// IDF on a 1-D int32 row: one row of the unigrams (skips do not apply to
// them); the one whose token lies beyond int32 is left out, so only
// columns 1 and 2 are counted; then one generic gives each column's
// weight where its count is positive.
func.func @idf(%x: tensor<6xi32>) -> tensor<3xf32> {
  %y = graph.tf_idf_vectorizer %x {max_gram_length = 1 : i64, max_skip_count = 3 : i64, min_gram_length = 1 : i64, mode = "IDF", ngram_counts = array<i64: 0>, ngram_indexes = array<i64: 2, 0, 1>, pool_int64s = array<i64: 5, 4294967296, 6>, weights = array<f32: 2.0, 3.0, 0.5>} : (tensor<6xi32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// CHECK-LABEL: func.func @idf
// CHECK:      %[[ROW:.*]] = tensor.reshape %x({{.*}}) : (tensor<6xi32>, tensor<2xi64>) -> tensor<1x6xi32>
// CHECK:      %[[ZERO:.*]] = linalg.fill
// CHECK-NEXT: %[[PART:.*]] = tensor.extract_slice %[[ZERO]][0, 1] [1, 2] [1, 1] : tensor<1x3xf32> to tensor<1x2xf32>
// CHECK-NEXT: %[[POOL:.*]] = graph.constant dense<{{\[\[\[}}6]], {{\[\[}}5]]]> : tensor<2x1x1xi32>
// CHECK-NEXT: %[[ONES:.*]] = graph.constant dense<1.000000e+00> : tensor<2x1xf32>
// CHECK-NEXT: %[[COUNTS:.*]] = linalg.generic {{.*}} ins(%[[ROW]], %[[POOL]], %[[ONES]] : {{.*}}) outs(%[[PART]] : tensor<1x2xf32>)
// CHECK-NOT:  linalg.generic
// CHECK:      %[[ALL:.*]] = tensor.insert_slice %[[COUNTS]] into %[[ZERO]][0, 1] [1, 2] [1, 1]
// CHECK-NEXT: %[[WEIGHTS:.*]] = graph.constant dense<[3.000000e+00, 5.000000e-01, 2.000000e+00]> : tensor<3xf32>
// CHECK:      %[[Y:.*]] = linalg.generic {{.*}} ins(%[[ALL]], %[[WEIGHTS]] : tensor<1x3xf32>, tensor<3xf32>)
// CHECK:        %[[FOUND:.*]] = arith.cmpf ogt, %{{.*}}, %{{.*}} : f32
// CHECK:        arith.select %[[FOUND]], %{{.*}}, %{{.*}} : f32
// CHECK:      %y = tensor.reshape %[[Y]]({{.*}}) : (tensor<1x3xf32>, tensor<1xi64>) -> tensor<3xf32>
