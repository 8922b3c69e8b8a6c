// RUN: ember-opt %s -p convert-graph-to-tensor | filecheck %s

// TfIdfVectorizer (TFIDF, unigrams and bigrams, one skip). Per length, i32
// counts [B, columns, entries] of the matches: the unigrams (columns 0 and
// 1) in one generic over x itself, the bigrams (columns 2 and 3) in one
// generic per skip distance, each window token read from a slice of x; the
// pool is a constant table read at (column, entry, j). Then one generic
// per length adds count * weight into its columns of Y.
func.func @tfidf(%x: tensor<2x5xi32>) -> tensor<2x4xf32> {
  %y = graph.tf_idf_vectorizer %x {max_gram_length = 2 : i64, max_skip_count = 1 : i64, min_gram_length = 1 : i64, mode = "TFIDF", ngram_counts = array<i64: 0, 2>, ngram_indexes = array<i64: 0, 1, 2, 3>, pool_int64s = array<i64: 7, 8, 7, 8, 8, 9>, weights = array<f32: 1.0, 2.0, 0.5, 4.0>} : (tensor<2x5xi32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @tfidf
// CHECK:      %[[Y0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK-NEXT: %[[UNIGRAMS:.*]] = graph.constant dense<{{\[\[\[}}7]], {{\[\[}}8]]]> : tensor<2x1x1xi32>
// CHECK:      %[[UZERO:.*]] = linalg.fill ins(%{{.*}} : i32) outs(%{{.*}} : tensor<2x2x1xi32>)
// CHECK-NEXT: %[[UCOUNT:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3)>, affine_map<(d0, d1, d2, d3) -> (d1, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %[[UNIGRAMS]] : tensor<2x5xi32>, tensor<2x1x1xi32>) outs(%[[UZERO]] : tensor<2x2x1xi32>)
// CHECK:        %[[HIT:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:   %[[ONE:.*]] = arith.extui %[[HIT]] : i1 to i32
// CHECK-NEXT:   arith.addi %{{.*}}, %[[ONE]] : i32
// CHECK:      %[[UPART:.*]] = tensor.extract_slice %[[Y0]][0, 0] [2, 2] [1, 1] : tensor<2x4xf32> to tensor<2x2xf32>
// CHECK-NEXT: %[[UWEIGHTS:.*]] = graph.constant dense<{{\[\[}}1.000000e+00], [2.000000e+00]]> : tensor<2x1xf32>
// CHECK-NEXT: %[[USCORED:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[UCOUNT]], %[[UWEIGHTS]] : tensor<2x2x1xi32>, tensor<2x1xf32>) outs(%[[UPART]] : tensor<2x2xf32>)
// CHECK:        %[[C:.*]] = arith.sitofp %{{.*}} : i32 to f32
// CHECK-NEXT:   %[[S:.*]] = arith.mulf %[[C]], %{{.*}} : f32
// CHECK-NEXT:   arith.addf %{{.*}}, %[[S]] : f32
// CHECK:      %[[Y1:.*]] = tensor.insert_slice %[[USCORED]] into %[[Y0]][0, 0] [2, 2] [1, 1]
// CHECK-NEXT: %[[BIGRAMS:.*]] = graph.constant dense<{{\[\[\[}}7, 8]], {{\[\[}}8, 9]]]> : tensor<2x1x2xi32>
// CHECK-NEXT: %[[A1:.*]] = tensor.extract_slice %x[0, 0] [2, 4] [1, 1] : tensor<2x5xi32> to tensor<2x4xi32>
// CHECK-NEXT: %[[B1:.*]] = tensor.extract_slice %x[0, 1] [2, 4] [1, 1] : tensor<2x5xi32> to tensor<2x4xi32>
// CHECK:      %[[BZERO:.*]] = linalg.fill ins(%{{.*}} : i32) outs(%{{.*}} : tensor<2x2x1xi32>)
// CHECK-NEXT: %[[ADJACENT:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3)>, affine_map<(d0, d1, d2, d3) -> (d1, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d1, d2, 1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[A1]], %[[B1]], %[[BIGRAMS]], %[[BIGRAMS]] : {{.*}}) outs(%[[BZERO]] : tensor<2x2x1xi32>)
// CHECK:        %[[FIRST:.*]] = arith.cmpi eq
// CHECK-NEXT:   %[[SECOND:.*]] = arith.cmpi eq
// CHECK-NEXT:   arith.andi %[[FIRST]], %[[SECOND]] : i1
// CHECK:      %[[A2:.*]] = tensor.extract_slice %x[0, 0] [2, 3] [1, 1] : tensor<2x5xi32> to tensor<2x3xi32>
// CHECK-NEXT: %[[B2:.*]] = tensor.extract_slice %x[0, 2] [2, 3] [1, 1] : tensor<2x5xi32> to tensor<2x3xi32>
// CHECK-NEXT: %[[SKIPPING:.*]] = linalg.generic {{.*}} ins(%[[A2]], %[[B2]], %[[BIGRAMS]], %[[BIGRAMS]] : {{.*}}) outs(%[[ADJACENT]] : tensor<2x2x1xi32>)
// CHECK:      %[[BPART:.*]] = tensor.extract_slice %[[Y1]][0, 2] [2, 2] [1, 1] : tensor<2x4xf32> to tensor<2x2xf32>
// CHECK-NEXT: %[[BWEIGHTS:.*]] = graph.constant dense<{{\[\[}}5.000000e-01], [4.000000e+00]]> : tensor<2x1xf32>
// CHECK-NEXT: %[[BSCORED:.*]] = linalg.generic {{.*}} ins(%[[SKIPPING]], %[[BWEIGHTS]] : tensor<2x2x1xi32>, tensor<2x1xf32>) outs(%[[BPART]] : tensor<2x2xf32>)
// CHECK:      %y = tensor.insert_slice %[[BSCORED]] into %[[Y1]][0, 2] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x4xf32>
// CHECK-NEXT: func.return %y

// IDF on a 1-D int32 row: one row of the unigrams (skips do not apply to
// them); the one whose token lies beyond int32 is left out, so only
// columns 1 and 2 are counted (a score of 1 each); then one generic gives
// each column's weight where its count is positive.
func.func @idf(%x: tensor<6xi32>) -> tensor<3xf32> {
  %y = graph.tf_idf_vectorizer %x {max_gram_length = 1 : i64, max_skip_count = 3 : i64, min_gram_length = 1 : i64, mode = "IDF", ngram_counts = array<i64: 0>, ngram_indexes = array<i64: 2, 0, 1>, pool_int64s = array<i64: 5, 4294967296, 6>, weights = array<f32: 2.0, 3.0, 0.5>} : (tensor<6xi32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// CHECK-LABEL: func.func @idf
// CHECK:      %[[ROW:.*]] = tensor.reshape %x({{.*}}) : (tensor<6xi32>, tensor<2xi64>) -> tensor<1x6xi32>
// CHECK:      %[[Y0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x3xf32>)
// CHECK-NEXT: %[[POOL:.*]] = graph.constant dense<{{\[\[\[}}6]], {{\[\[}}5]]]> : tensor<2x1x1xi32>
// CHECK:      %[[COUNT:.*]] = linalg.generic {{.*}} ins(%[[ROW]], %[[POOL]] : {{.*}}) outs(%{{.*}} : tensor<1x2x1xi32>)
// CHECK-NOT:  linalg.generic
// CHECK:      %[[PART:.*]] = tensor.extract_slice %[[Y0]][0, 1] [1, 2] [1, 1] : tensor<1x3xf32> to tensor<1x2xf32>
// CHECK-NEXT: %[[ONES:.*]] = graph.constant dense<1.000000e+00> : tensor<2x1xf32>
// CHECK-NEXT: %[[SCORED:.*]] = linalg.generic {{.*}} ins(%[[COUNT]], %[[ONES]] : {{.*}}) outs(%[[PART]] : tensor<1x2xf32>)
// CHECK:      %[[ALL:.*]] = tensor.insert_slice %[[SCORED]] into %[[Y0]][0, 1] [1, 2] [1, 1]
// CHECK-NEXT: %[[WEIGHTS:.*]] = graph.constant dense<[3.000000e+00, 5.000000e-01, 2.000000e+00]> : tensor<3xf32>
// CHECK:      %[[Y:.*]] = linalg.generic {{.*}} ins(%[[ALL]], %[[WEIGHTS]] : tensor<1x3xf32>, tensor<3xf32>)
// CHECK:        %[[FOUND:.*]] = arith.cmpf ogt, %{{.*}}, %{{.*}} : f32
// CHECK:        arith.select %[[FOUND]], %{{.*}}, %{{.*}} : f32
// CHECK:      %y = tensor.reshape %[[Y]]({{.*}}) : (tensor<1x3xf32>, tensor<1xi64>) -> tensor<3xf32>
