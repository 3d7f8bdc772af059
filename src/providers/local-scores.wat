;; The offline ranking's scores ahead in WebAssembly: what local-embedder.ts's LocalEmbedder runs
;; for `scoreAhead` (a prune's turns against its goal) instead of its JavaScript loop, when this Node
;; runs WebAssembly. Each score is the one `similarities` gives, bit for bit: the same operations on
;; the same doubles in the same order (WebAssembly's f64 and f32 arithmetic is IEEE 754's, as
;; JavaScript's is, and neither fuses a multiply into an add), each bucket's sum rounded to a float
;; as a Float32Array store rounds it. JavaScript gives what needs a logarithm or a term's name (each
;; term's IDF and hash, by id), so nothing here depends on how a term is spelled.
;;
;; Why: a prune scores every turn once, and that JavaScript ran cold, before V8 had optimized it
;; (about 50 ms of the bench's 1M-token prune, on its main thread, against about 16 once warm).
;;
;; `npm run build:wasm` compiles this file into local-scores-binary.ts (test/bpe-merge.test.ts
;; checks that the two agree).
;;
;; Memory (imported; local-scores.ts makes it and says where each table is, by the byte addresses
;; `score` is given):
;;   goal     4096 f32: the goal's vector (LocalEmbedder's 4,096 buckets: a bucket is a hash's low
;;            12 bits, and a text's buckets are marked in 128 words of 32 bits)
;;   vector   4096 f32: zero; each text's weights summed here, and zeroed again after it
;;   touched  128 i32: zero; a bit per bucket a text wrote, cleared again after it
;;   idf      an f64 per term id
;;   hashes   an i32 per term id (the bucket is its low 12 bits, the sign its high bit)
;;   offsets  n + 1 i32: text t's pairs are tf[offsets[t], offsets[t + 1])
;;   tf       [term id, count] i32 pairs, per text in the order its terms first appear
;;   out      n f64: the scores
(module
  (import "env" "memory" (memory 1))

  ;; Scores the `n` texts: out[t] = the cosine of the goal's vector and text t's (0 when either is
  ;; all zeros). `k1p1`, `k1`, `b`, `oneMinusB`: BM25's K1 + 1, K1, B and 1 - B as JavaScript has them.
  (func (export "score")
    (param $n i32) (param $tf i32) (param $offsets i32) (param $idf i32) (param $hashes i32)
    (param $goal i32) (param $vector i32) (param $touched i32) (param $out i32)
    (param $goalNorm f64) (param $average f64) (param $k1p1 f64) (param $k1 f64) (param $b f64) (param $oneMinusB f64)
    (local $t i32) (local $k i32) (local $end i32) (local $length i32) (local $id i32) (local $h i32)
    (local $bucket i32) (local $at i32) (local $w i32) (local $bits i32)
    (local $lengthNorm f64) (local $count f64) (local $weight f64) (local $dot f64) (local $norm f64)
    (local $x f64) (local $y f64)
    (block $scored
      (loop $texts
        (br_if $scored (i32.ge_u (local.get $t) (local.get $n)))
        (local.set $end (i32.load offset=4 (i32.add (local.get $offsets) (i32.shl (local.get $t) (i32.const 2)))))
        ;; Its length: the sum of its counts.
        (local.set $length (i32.const 0))
        (local.set $k (i32.add (i32.load (i32.add (local.get $offsets) (i32.shl (local.get $t) (i32.const 2)))) (i32.const 1)))
        (block $summed
          (loop $counts
            (br_if $summed (i32.ge_u (local.get $k) (local.get $end)))
            (local.set $length (i32.add (local.get $length) (i32.load (i32.add (local.get $tf) (i32.shl (local.get $k) (i32.const 2))))))
            (local.set $k (i32.add (local.get $k) (i32.const 2)))
            (br $counts)))
        (local.set $lengthNorm
          (f64.add (local.get $oneMinusB) (f64.div (f64.mul (local.get $b) (f64.convert_i32_s (local.get $length))) (local.get $average))))
        ;; Each term's weight, added into its bucket (as a float), its bucket's bit set.
        (local.set $k (i32.load (i32.add (local.get $offsets) (i32.shl (local.get $t) (i32.const 2)))))
        (block $weighed
          (loop $terms
            (br_if $weighed (i32.ge_u (local.get $k) (local.get $end)))
            (local.set $at (i32.add (local.get $tf) (i32.shl (local.get $k) (i32.const 2))))
            (local.set $id (i32.load (local.get $at)))
            (local.set $count (f64.convert_i32_s (i32.load offset=4 (local.get $at))))
            (local.set $weight
              (f64.mul
                (f64.div
                  (f64.mul (local.get $count) (local.get $k1p1))
                  (f64.add (local.get $count) (f64.mul (local.get $k1) (local.get $lengthNorm))))
                (f64.load (i32.add (local.get $idf) (i32.shl (local.get $id) (i32.const 3))))))
            (local.set $h (i32.load (i32.add (local.get $hashes) (i32.shl (local.get $id) (i32.const 2)))))
            (local.set $bucket (i32.and (local.get $h) (i32.const 4095)))
            (local.set $at (i32.add (local.get $touched) (i32.shl (i32.shr_u (local.get $bucket) (i32.const 5)) (i32.const 2))))
            (i32.store (local.get $at) (i32.or (i32.load (local.get $at)) (i32.shl (i32.const 1) (i32.and (local.get $bucket) (i32.const 31)))))
            (local.set $at (i32.add (local.get $vector) (i32.shl (local.get $bucket) (i32.const 2))))
            (f32.store (local.get $at)
              (f32.demote_f64
                (f64.add
                  (f64.promote_f32 (f32.load (local.get $at)))
                  (select (f64.neg (local.get $weight)) (local.get $weight) (i32.shr_u (local.get $h) (i32.const 31))))))
            (local.set $k (i32.add (local.get $k) (i32.const 2)))
            (br $terms)))
        ;; The written buckets in increasing order, each word's bits from the lowest: the dot
        ;; product and the squared norm, the buckets and bits cleared.
        (local.set $dot (f64.const 0))
        (local.set $norm (f64.const 0))
        (local.set $w (i32.const 0))
        (block $summedUp
          (loop $words
            (br_if $summedUp (i32.ge_u (local.get $w) (i32.const 128)))
            (local.set $at (i32.add (local.get $touched) (i32.shl (local.get $w) (i32.const 2))))
            (local.set $bits (i32.load (local.get $at)))
            (if (local.get $bits)
              (then
                (i32.store (local.get $at) (i32.const 0))
                (block $cleared
                  (loop $bitsLeft
                    (br_if $cleared (i32.eqz (local.get $bits)))
                    (local.set $bucket (i32.add (i32.shl (local.get $w) (i32.const 5)) (i32.ctz (local.get $bits))))
                    (local.set $bits (i32.and (local.get $bits) (i32.sub (local.get $bits) (i32.const 1))))
                    (local.set $x (f64.promote_f32 (f32.load (i32.add (local.get $goal) (i32.shl (local.get $bucket) (i32.const 2))))))
                    (local.set $at (i32.add (local.get $vector) (i32.shl (local.get $bucket) (i32.const 2))))
                    (local.set $y (f64.promote_f32 (f32.load (local.get $at))))
                    (local.set $dot (f64.add (local.get $dot) (f64.mul (local.get $x) (local.get $y))))
                    (local.set $norm (f64.add (local.get $norm) (f64.mul (local.get $y) (local.get $y))))
                    (f32.store (local.get $at) (f32.const 0))
                    (br $bitsLeft)))))
            (local.set $w (i32.add (local.get $w) (i32.const 1)))
            (br $words)))
        (f64.store (i32.add (local.get $out) (i32.shl (local.get $t) (i32.const 3)))
          (if (result f64) (i32.or (f64.eq (local.get $goalNorm) (f64.const 0)) (f64.eq (local.get $norm) (f64.const 0)))
            (then (f64.const 0))
            (else (f64.div (local.get $dot) (f64.sqrt (f64.mul (local.get $goalNorm) (local.get $norm)))))))
        (local.set $t (i32.add (local.get $t) (i32.const 1)))
        (br $texts))))
)
