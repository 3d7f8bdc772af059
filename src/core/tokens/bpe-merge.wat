;; The byte-pair count of one regex piece, in WebAssembly: what bpe-merge.ts runs instead of the
;; JavaScript count for a piece of up to MAX_BYTES bytes (one that is a token whole counts 1 here
;; too; an empty one 0), once the counter is warm (bpe.ts, #warmAfter). Its result equals
;; tiktoken's quadratic loop (the lowest-ranked adjacent pair first, the leftmost on ties), found as
;; bpe.ts's mergeHeap finds it: parts in a linked list, every pair in a binary min-heap keyed by
;; (rank, start), a popped pair whose part was absorbed or whose rank changed skipped.
;;
;; Why WebAssembly: V8 runs JavaScript in its interpreter until a function has run often enough to be
;; optimized, and a worker thread compiles its own copy. A batch's worker meets a few thousand new
;; pieces, most of them in its first files, and merged them at a fraction of their optimized speed;
;; WebAssembly is compiled before it first runs. (docs/decisions.md, "Pieces merge in WebAssembly".)
;;
;; `npm run build:wasm` compiles this file into bpe-merge-binary.ts (test/bpe-merge.test.ts checks
;; that the two agree).
;;
;; Memory (imported; bpe-merge.ts lays it out, and every address below is fixed):
;;   [0, 256)          the piece's UTF-8 bytes (MAX_BYTES = 256)
;;   [1024, 2048)      next: i32 per byte position, the start of the next part (or n)
;;   [2112, 3136)      prev: i32, the start of the previous part
;;   [3200, 4224)      rank: i32, the rank of the part starting here joined with the next; -1: none
;;   [4352, 10496)     the heap: i64 keys (rank << 32 | start), at most 3 (n - 1) of them
;;   from TABLE_BASE   the rank table, as rank-table.ts reads it: offsets u32[n + 1], slots i32[],
;;                     token bytes; `init` is told where each is.
(module
  (import "env" "memory" (memory 1))
  (global $offsets (mut i32) (i32.const 0))
  (global $slots (mut i32) (i32.const 0))
  (global $mask (mut i32) (i32.const 0))
  (global $bytes (mut i32) (i32.const 0))
  ;; Keys in the heap.
  (global $size (mut i32) (i32.const 0))

  (func (export "init") (param $offsets i32) (param $slots i32) (param $mask i32) (param $bytes i32)
    (global.set $offsets (local.get $offsets))
    (global.set $slots (local.get $slots))
    (global.set $mask (local.get $mask))
    (global.set $bytes (local.get $bytes)))

  ;; The rank of the piece's bytes [from, to), or -1 when they are no token: RankTable.rank's lookup
  ;; (FNV-1a of the bytes, linear probing, the token's bytes compared).
  (func $rank (param $from i32) (param $to i32) (result i32)
    (local $h i32) (local $i i32) (local $slot i32) (local $r i32) (local $start i32) (local $len i32) (local $k i32)
    (local.set $h (i32.const 0x811c9dc5))
    (local.set $i (local.get $from))
    (block $hashed
      (loop $hash
        (br_if $hashed (i32.ge_u (local.get $i) (local.get $to)))
        (local.set $h (i32.mul (i32.xor (local.get $h) (i32.load8_u (local.get $i))) (i32.const 0x01000193)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $hash)))
    (local.set $len (i32.sub (local.get $to) (local.get $from)))
    (local.set $slot (i32.and (local.get $h) (global.get $mask)))
    (loop $probe
      (local.set $r (i32.load (i32.add (global.get $slots) (i32.shl (local.get $slot) (i32.const 2)))))
      (if (i32.lt_s (local.get $r) (i32.const 0)) (then (return (i32.const -1))))
      (local.set $start (i32.load (i32.add (global.get $offsets) (i32.shl (local.get $r) (i32.const 2)))))
      (if (i32.eq
            (i32.sub (i32.load (i32.add (global.get $offsets) (i32.shl (i32.add (local.get $r) (i32.const 1)) (i32.const 2)))) (local.get $start))
            (local.get $len))
        (then
          (local.set $k (i32.const 0))
          (block $differs
            (loop $compare
              (if (i32.ge_u (local.get $k) (local.get $len)) (then (return (local.get $r))))
              (br_if $differs
                (i32.ne
                  (i32.load8_u (i32.add (global.get $bytes) (i32.add (local.get $start) (local.get $k))))
                  (i32.load8_u (i32.add (local.get $from) (local.get $k)))))
              (local.set $k (i32.add (local.get $k) (i32.const 1)))
              (br $compare)))))
      (local.set $slot (i32.and (i32.add (local.get $slot) (i32.const 1)) (global.get $mask)))
      (br $probe))
    (unreachable))

  (func $push (param $key i64)
    (local $i i32) (local $parent i32) (local $p i64)
    (local.set $i (global.get $size))
    (global.set $size (i32.add (global.get $size) (i32.const 1)))
    (block $placed
      (loop $up
        (br_if $placed (i32.eqz (local.get $i)))
        (local.set $parent (i32.shr_u (i32.sub (local.get $i) (i32.const 1)) (i32.const 1)))
        (local.set $p (i64.load (i32.add (i32.const 4352) (i32.shl (local.get $parent) (i32.const 3)))))
        (br_if $placed (i64.le_u (local.get $p) (local.get $key)))
        (i64.store (i32.add (i32.const 4352) (i32.shl (local.get $i) (i32.const 3))) (local.get $p))
        (local.set $i (local.get $parent))
        (br $up)))
    (i64.store (i32.add (i32.const 4352) (i32.shl (local.get $i) (i32.const 3))) (local.get $key)))

  (func $pop (result i64)
    (local $top i64) (local $last i64) (local $i i32) (local $l i32) (local $m i32) (local $mv i64) (local $rv i64)
    (local.set $top (i64.load (i32.const 4352)))
    (global.set $size (i32.sub (global.get $size) (i32.const 1)))
    (local.set $last (i64.load (i32.add (i32.const 4352) (i32.shl (global.get $size) (i32.const 3)))))
    (local.set $i (i32.const 0))
    (block $placed
      (loop $down
        (local.set $l (i32.add (i32.shl (local.get $i) (i32.const 1)) (i32.const 1)))
        (br_if $placed (i32.ge_s (local.get $l) (global.get $size)))
        (local.set $m (local.get $l))
        (local.set $mv (i64.load (i32.add (i32.const 4352) (i32.shl (local.get $l) (i32.const 3)))))
        (if (i32.lt_s (i32.add (local.get $l) (i32.const 1)) (global.get $size))
          (then
            (local.set $rv (i64.load (i32.add (i32.const 4352) (i32.shl (i32.add (local.get $l) (i32.const 1)) (i32.const 3)))))
            (if (i64.lt_u (local.get $rv) (local.get $mv))
              (then (local.set $m (i32.add (local.get $l) (i32.const 1))) (local.set $mv (local.get $rv))))))
        (br_if $placed (i64.ge_u (local.get $mv) (local.get $last)))
        (i64.store (i32.add (i32.const 4352) (i32.shl (local.get $i) (i32.const 3))) (local.get $mv))
        (local.set $i (local.get $m))
        (br $down)))
    (i64.store (i32.add (i32.const 4352) (i32.shl (local.get $i) (i32.const 3))) (local.get $last))
    (local.get $top))

  ;; The pair of the part at $s and the next one, which together span [s, end): its rank, queued.
  (func $pair (param $s i32) (param $end i32)
    (local $r i32)
    (local.set $r (call $rank (local.get $s) (local.get $end)))
    (i32.store (i32.add (i32.const 3200) (i32.shl (local.get $s) (i32.const 2))) (local.get $r))
    (if (i32.ge_s (local.get $r) (i32.const 0))
      (then (call $push (i64.or (i64.shl (i64.extend_i32_u (local.get $r)) (i64.const 32)) (i64.extend_i32_u (local.get $s)))))))

  ;; Tokens in the piece's first n bytes (0 <= n <= 256).
  (func (export "count") (param $n i32) (result i32)
    (local $i i32) (local $parts i32) (local $key i64) (local $r i32) (local $s i32) (local $b i32) (local $c i32)
    (if (i32.ge_s (call $rank (i32.const 0) (local.get $n)) (i32.const 0)) (then (return (i32.const 1))))
    (global.set $size (i32.const 0))
    ;; Every byte a part.
    (local.set $i (i32.const 0))
    (loop $fill
      (i32.store (i32.add (i32.const 1024) (i32.shl (local.get $i) (i32.const 2))) (i32.add (local.get $i) (i32.const 1)))
      (i32.store (i32.add (i32.const 2112) (i32.shl (local.get $i) (i32.const 2))) (i32.sub (local.get $i) (i32.const 1)))
      (i32.store (i32.add (i32.const 3200) (i32.shl (local.get $i) (i32.const 2))) (i32.const -1))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $fill (i32.lt_u (local.get $i) (local.get $n))))
    (local.set $i (i32.const 0))
    (block $paired
      (loop $pairs
        (br_if $paired (i32.ge_s (local.get $i) (i32.sub (local.get $n) (i32.const 1))))
        (call $pair (local.get $i) (i32.add (local.get $i) (i32.const 2)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $pairs)))
    (local.set $parts (local.get $n))
    (block $merged
      (loop $merge
        (br_if $merged (i32.eqz (global.get $size)))
        (local.set $key (call $pop))
        (local.set $r (i32.wrap_i64 (i64.shr_u (local.get $key) (i64.const 32))))
        (local.set $s (i32.wrap_i64 (local.get $key)))
        ;; Stale: the part at s was absorbed (its rank is -1), or its pair has another rank now.
        (br_if $merge (i32.ne (i32.load (i32.add (i32.const 3200) (i32.shl (local.get $s) (i32.const 2)))) (local.get $r)))
        ;; The part at s absorbs the next one (b); c follows.
        (local.set $b (i32.load (i32.add (i32.const 1024) (i32.shl (local.get $s) (i32.const 2)))))
        (local.set $c (i32.load (i32.add (i32.const 1024) (i32.shl (local.get $b) (i32.const 2)))))
        (i32.store (i32.add (i32.const 1024) (i32.shl (local.get $s) (i32.const 2))) (local.get $c))
        (i32.store (i32.add (i32.const 3200) (i32.shl (local.get $b) (i32.const 2))) (i32.const -1))
        (local.set $parts (i32.sub (local.get $parts) (i32.const 1)))
        (if (i32.lt_u (local.get $c) (local.get $n))
          (then
            (i32.store (i32.add (i32.const 2112) (i32.shl (local.get $c) (i32.const 2))) (local.get $s))
            (call $pair (local.get $s) (i32.load (i32.add (i32.const 1024) (i32.shl (local.get $c) (i32.const 2))))))
          (else (i32.store (i32.add (i32.const 3200) (i32.shl (local.get $s) (i32.const 2))) (i32.const -1))))
        ;; The previous part's pair now ends where the part at s ends.
        (if (i32.gt_s (local.get $s) (i32.const 0))
          (then (call $pair (i32.load (i32.add (i32.const 2112) (i32.shl (local.get $s) (i32.const 2)))) (local.get $c))))
        (br $merge)))
    (local.get $parts))
)
