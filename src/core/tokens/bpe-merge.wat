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
;; Below it, the scan: a text's ASCII pieces split, looked up in a memo and counted (merged here on a
;; miss), what bpe.ts does per piece once warm under o200k.
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
;;   [10560, 10816)    the class of each byte value for the scan (the data segment below)
;;   from TABLE_BASE   the rank table, as rank-table.ts reads it: offsets u32[n + 1], slots i32[],
;;                     token bytes; `init` is told where each is.
;;   then              the scan's memo (`init_scan`): a table of up to MEMO_SLOTS slots of 8 bytes
;;                     (a piece's hash, and where the piece is in the arena; 0: empty), the arena
;;                     (each piece as its hash, length, count and bytes), and the text being scanned
;;                     (its UTF-8, then the mark 0xFF after a part that is not the last), each where
;;                     bpe-merge.ts puts it.
(module
  (import "env" "memory" (memory 1))
  (global $offsets (mut i32) (i32.const 0))
  (global $slots (mut i32) (i32.const 0))
  (global $mask (mut i32) (i32.const 0))
  (global $bytes (mut i32) (i32.const 0))
  ;; Keys in the heap.
  (global $size (mut i32) (i32.const 0))
  ;; The scan's memo: its slots, their mask, its arena and the arena's end; pieces in it, the arena's top.
  (global $memo (mut i32) (i32.const 0))
  (global $memoMask (mut i32) (i32.const 0))
  (global $arena (mut i32) (i32.const 0))
  (global $arenaEnd (mut i32) (i32.const 0))
  (global $memoSize (mut i32) (i32.const 0))
  (global $arenaTop (mut i32) (i32.const 0))
  ;; Where the last scan stopped; pieces it merged (a test's proof that it ran).
  (global $stop (mut i32) (i32.const 0))
  (global $merged (mut i32) (i32.const 0))

  ;; Byte classes (ascii-pieces.ts): 1 lower, 2 upper, 3 digit, 4 space, 5 tab/VT/FF, 6 CR/LF,
  ;; 7 any other ASCII byte; 0 a byte of a non-ASCII character.
  (data (i32.const 10560)
    "\07\07\07\07\07\07\07\07\07\05\06\05\05\06\07\07\07\07\07\07\07\07\07\07\07\07\07\07\07\07\07\07"
    "\04\07\07\07\07\07\07\07\07\07\07\07\07\07\07\07\03\03\03\03\03\03\03\03\03\03\07\07\07\07\07\07"
    "\07\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\02\07\07\07\07\07"
    "\07\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\07\07\07\07\07")

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
  (func $count (export "count") (param $n i32) (result i32)
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

  ;; ---- The scan: a text's ASCII pieces split, looked up and counted here -----------------------
  ;;
  ;; What bpe.ts's fast path does per piece, for the o200k pattern: find where the regex's match ends
  ;; (ascii-pieces.ts, byte for byte the same decisions, on the text's UTF-8: a byte of a non-ASCII
  ;; character is class 0 there as such a character is in JavaScript), count a one-byte piece 1 and
  ;; a longer one from the memo, merging it on a miss. It stops, for JavaScript to go on, where a
  ;; piece needs a character that is not ASCII or is longer than MAX_BYTES. A text given in parts
  ;; has each part but the last followed by the byte 0xFF (never in UTF-8): wherever a decision
  ;; would look at it (the next part could change it: a word's contraction, a run of line breaks
  ;; or slashes), it is not ASCII, or is checked for, and the scan stops there.

  (func (export "init_scan") (param $memo i32) (param $arena i32) (param $arenaEnd i32)
    (global.set $memo (local.get $memo))
    (global.set $arena (local.get $arena))
    (global.set $arenaEnd (local.get $arenaEnd))
    (call $clearMemo))

  ;; (1) and (2) from the first letter at $p: capitals, then small letters, then a contraction.
  (func $wordEnd (param $p i32) (param $n i32) (result i32)
    (local $e i32) (local $a i32) (local $b i32)
    (local.set $e (local.get $p))
    (block $done (loop $upper
      (br_if $done (i32.ge_u (local.get $e) (local.get $n)))
      (br_if $done (i32.ne (i32.load8_u offset=10560 (i32.load8_u (local.get $e))) (i32.const 2)))
      (local.set $e (i32.add (local.get $e) (i32.const 1)))
      (br $upper)))
    (block $done (loop $lower
      (br_if $done (i32.ge_u (local.get $e) (local.get $n)))
      (br_if $done (i32.ne (i32.load8_u offset=10560 (i32.load8_u (local.get $e))) (i32.const 1)))
      (local.set $e (i32.add (local.get $e) (i32.const 1)))
      (br $lower)))
    (if (i32.lt_u (local.get $e) (local.get $n))
      (then (if (i32.eqz (i32.load8_u offset=10560 (i32.load8_u (local.get $e)))) (then (return (i32.const -1))))))
    ;; A contraction: 's 't 'm 'd 're 've 'll, in any case (`| 0x20` folds the capitals).
    (if (i32.ge_u (i32.add (local.get $e) (i32.const 1)) (local.get $n)) (then (return (local.get $e))))
    (if (i32.ne (i32.load8_u (local.get $e)) (i32.const 39)) (then (return (local.get $e))))
    (local.set $a (i32.load8_u (i32.add (local.get $e) (i32.const 1))))
    (if (i32.eq (local.get $a) (i32.const 0xff)) (then (return (i32.const -1))))
    (local.set $a (i32.or (local.get $a) (i32.const 0x20)))
    (if (i32.or (i32.or (i32.eq (local.get $a) (i32.const 115)) (i32.eq (local.get $a) (i32.const 116)))
                (i32.or (i32.eq (local.get $a) (i32.const 109)) (i32.eq (local.get $a) (i32.const 100))))
      (then (return (i32.add (local.get $e) (i32.const 2)))))
    (if (i32.ge_u (i32.add (local.get $e) (i32.const 2)) (local.get $n)) (then (return (local.get $e))))
    (local.set $b (i32.load8_u (i32.add (local.get $e) (i32.const 2))))
    (if (i32.eq (local.get $b) (i32.const 0xff)) (then (return (i32.const -1))))
    (local.set $b (i32.or (local.get $b) (i32.const 0x20)))
    (if (i32.or
          (i32.and (i32.or (i32.eq (local.get $a) (i32.const 114)) (i32.eq (local.get $a) (i32.const 118))) (i32.eq (local.get $b) (i32.const 101)))
          (i32.and (i32.eq (local.get $a) (i32.const 108)) (i32.eq (local.get $b) (i32.const 108))))
      (then (return (i32.add (local.get $e) (i32.const 3)))))
    (local.get $e))

  ;; (4) from the first symbol at $p: the symbols, then any line breaks and slashes.
  (func $symbolsEnd (param $p i32) (param $n i32) (result i32)
    (local $e i32) (local $k i32) (local $c i32)
    (local.set $e (local.get $p))
    (block $done (loop $symbols
      (br_if $done (i32.ge_u (local.get $e) (local.get $n)))
      (local.set $k (i32.load8_u offset=10560 (i32.load8_u (local.get $e))))
      (if (i32.eqz (local.get $k)) (then (return (i32.const -1))))
      (br_if $done (i32.ne (local.get $k) (i32.const 7)))
      (local.set $e (i32.add (local.get $e) (i32.const 1)))
      (br $symbols)))
    (block $done (loop $breaks
      (br_if $done (i32.ge_u (local.get $e) (local.get $n)))
      (local.set $c (i32.load8_u (local.get $e)))
      (if (i32.eq (local.get $c) (i32.const 0xff)) (then (return (i32.const -1))))
      (br_if $done (i32.and (i32.and (i32.ne (local.get $c) (i32.const 10)) (i32.ne (local.get $c) (i32.const 13))) (i32.ne (local.get $c) (i32.const 47))))
      (local.set $e (i32.add (local.get $e) (i32.const 1)))
      (br $breaks)))
    (local.get $e))

  ;; (5), (6) and (7) over the run of whitespace at $p.
  (func $whitespaceEnd (param $p i32) (param $n i32) (result i32)
    (local $e i32) (local $k i32) (local $last i32)
    (local.set $e (local.get $p))
    (local.set $last (i32.const -1))
    (block $done (loop $spaces
      (br_if $done (i32.ge_u (local.get $e) (local.get $n)))
      (local.set $k (i32.load8_u offset=10560 (i32.load8_u (local.get $e))))
      (if (i32.eqz (local.get $k)) (then (return (i32.const -1))))
      (if (i32.eq (local.get $k) (i32.const 6))
        (then (local.set $last (local.get $e)))
        (else (br_if $done (i32.and (i32.ne (local.get $k) (i32.const 4)) (i32.ne (local.get $k) (i32.const 5))))))
      (local.set $e (i32.add (local.get $e) (i32.const 1)))
      (br $spaces)))
    (if (i32.ge_s (local.get $last) (i32.const 0)) (then (return (i32.add (local.get $last) (i32.const 1)))))
    (if (i32.eq (local.get $e) (local.get $n)) (then (return (local.get $n))))
    (select (i32.sub (local.get $e) (i32.const 1)) (local.get $e) (i32.ge_u (i32.sub (local.get $e) (local.get $p)) (i32.const 2))))

  ;; Where the regex's match at $p ends (the text ends at $n), or -1: JavaScript decides.
  (func $pieceEnd (param $p i32) (param $n i32) (result i32)
    (local $k i32) (local $e i32) (local $d i32) (local $next i32)
    (local.set $k (i32.load8_u offset=10560 (i32.load8_u (local.get $p))))
    (if (i32.eqz (local.get $k)) (then (return (i32.const -1))))
    (if (i32.le_u (local.get $k) (i32.const 2)) (then (return (call $wordEnd (local.get $p) (local.get $n)))))
    (if (i32.eq (local.get $k) (i32.const 3))
      (then
        ;; Up to three digits.
        (local.set $e (i32.add (local.get $p) (i32.const 1)))
        (block $done (loop $digits
          (br_if $done (i32.ge_u (local.get $e) (local.get $n)))
          (br_if $done (i32.ge_u (local.get $e) (i32.add (local.get $p) (i32.const 3))))
          (local.set $d (i32.load8_u offset=10560 (i32.load8_u (local.get $e))))
          (if (i32.eqz (local.get $d)) (then (return (i32.const -1))))
          (br_if $done (i32.ne (local.get $d) (i32.const 3)))
          (local.set $e (i32.add (local.get $e) (i32.const 1)))
          (br $digits)))
        (return (local.get $e))))
    (if (i32.eq (local.get $k) (i32.const 6)) (then (return (call $whitespaceEnd (local.get $p) (local.get $n)))))
    ;; A space, a blank or a symbol: one before a word belongs to it, a space before symbols to them.
    (if (i32.lt_u (i32.add (local.get $p) (i32.const 1)) (local.get $n))
      (then
        (local.set $next (i32.load8_u offset=10560 (i32.load8_u (i32.add (local.get $p) (i32.const 1)))))
        (if (i32.eqz (local.get $next)) (then (return (i32.const -1))))
        (if (i32.le_u (local.get $next) (i32.const 2)) (then (return (call $wordEnd (i32.add (local.get $p) (i32.const 1)) (local.get $n)))))
        (if (i32.and (i32.eq (local.get $k) (i32.const 4)) (i32.eq (local.get $next) (i32.const 7)))
          (then (return (call $symbolsEnd (i32.add (local.get $p) (i32.const 1)) (local.get $n)))))))
    (if (result i32) (i32.eq (local.get $k) (i32.const 7))
      (then (call $symbolsEnd (local.get $p) (local.get $n)))
      (else (call $whitespaceEnd (local.get $p) (local.get $n)))))

;; Empties the memo: its table back to its first size, its arena to nothing.
  (func $clearMemo
    (global.set $memoMask (i32.const 1023))
    (memory.fill (global.get $memo) (i32.const 0) (i32.const 8192))
    (global.set $memoSize (i32.const 0))
    (global.set $arenaTop (global.get $arena)))

  ;; An empty slot of the table for a piece of hash $h (a slot's second word is 0 when empty).
  (func $emptySlot (param $h i32) (result i32)
    (local $slot i32) (local $at i32)
    (local.set $slot (i32.and (local.get $h) (global.get $memoMask)))
    (loop $probe
      (local.set $at (i32.add (global.get $memo) (i32.shl (local.get $slot) (i32.const 3))))
      (if (i32.eqz (i32.load offset=4 (local.get $at))) (then (return (local.get $at))))
      (local.set $slot (i32.and (i32.add (local.get $slot) (i32.const 1)) (global.get $memoMask)))
      (br $probe))
    (unreachable))

  ;; The table twice as large, its pieces put back in from the arena.
  (func $growMemo
    (local $entry i32)
    (global.set $memoMask (i32.add (i32.shl (global.get $memoMask) (i32.const 1)) (i32.const 1)))
    (memory.fill (global.get $memo) (i32.const 0) (i32.shl (i32.add (global.get $memoMask) (i32.const 1)) (i32.const 3)))
    (local.set $entry (global.get $arena))
    (block $done (loop $entries
      (br_if $done (i32.ge_u (local.get $entry) (global.get $arenaTop)))
      (call $place (i32.load (local.get $entry)) (local.get $entry))
      (local.set $entry (i32.add (local.get $entry) (i32.and (i32.add (i32.load offset=4 (local.get $entry)) (i32.const 15)) (i32.const -4))))
      (br $entries))))

  (func $place (param $h i32) (param $entry i32)
    (local $at i32)
    (local.set $at (call $emptySlot (local.get $h)))
    (i32.store (local.get $at) (local.get $h))
    (i32.store offset=4 (local.get $at) (local.get $entry)))

  ;; Tokens in the piece at $p of $len bytes (2 <= len <= MAX_BYTES): from the memo, or merged and kept.
  ;; The memo: a table of slots (hash, where the piece is in the arena), linear probing, doubled at
  ;; half full up to MEMO_SLOTS; the arena: each piece as its hash, length, count and bytes, 4-aligned.
  (func $piece (param $p i32) (param $len i32) (result i32)
    (local $h i32) (local $i i32) (local $slot i32) (local $at i32) (local $entry i32) (local $n i32)
    (local.set $h (i32.const 0x811c9dc5))
    (local.set $i (i32.const 0))
    (loop $hash
      (local.set $h (i32.mul (i32.xor (local.get $h) (i32.load8_u (i32.add (local.get $p) (local.get $i)))) (i32.const 0x01000193)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $hash (i32.lt_u (local.get $i) (local.get $len))))
    (local.set $slot (i32.and (local.get $h) (global.get $memoMask)))
    (block $missed (loop $probe
      (local.set $at (i32.add (global.get $memo) (i32.shl (local.get $slot) (i32.const 3))))
      (local.set $entry (i32.load offset=4 (local.get $at)))
      (br_if $missed (i32.eqz (local.get $entry)))
      (if (i32.and (i32.eq (i32.load (local.get $at)) (local.get $h)) (i32.eq (i32.load offset=4 (local.get $entry)) (local.get $len)))
        (then
          (local.set $i (i32.const 0))
          (block $differs (loop $compare
            (if (i32.ge_u (local.get $i) (local.get $len)) (then (return (i32.load offset=8 (local.get $entry)))))
            (br_if $differs (i32.ne (i32.load8_u offset=12 (i32.add (local.get $entry) (local.get $i))) (i32.load8_u (i32.add (local.get $p) (local.get $i)))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $compare)))))
      (local.set $slot (i32.and (i32.add (local.get $slot) (i32.const 1)) (global.get $memoMask)))
      (br $probe)))
    ;; A miss: merge the piece where the merge reads it, then keep it.
    (memory.copy (i32.const 0) (local.get $p) (local.get $len))
    (local.set $n (call $count (local.get $len)))
    (global.set $merged (i32.add (global.get $merged) (i32.const 1)))
    (if (i32.or
          (i32.ge_u (global.get $memoSize) (i32.const 65536))
          (i32.gt_u (i32.add (global.get $arenaTop) (i32.add (local.get $len) (i32.const 15))) (global.get $arenaEnd)))
      (then (call $clearMemo))
      (else
        (if (i32.gt_u (i32.shl (i32.add (global.get $memoSize) (i32.const 1)) (i32.const 1)) (i32.add (global.get $memoMask) (i32.const 1)))
          (then (call $growMemo)))))
    (local.set $entry (global.get $arenaTop))
    (i32.store (local.get $entry) (local.get $h))
    (i32.store offset=4 (local.get $entry) (local.get $len))
    (i32.store offset=8 (local.get $entry) (local.get $n))
    (memory.copy (i32.add (local.get $entry) (i32.const 12)) (local.get $p) (local.get $len))
    (global.set $arenaTop (i32.add (local.get $entry) (i32.and (i32.add (local.get $len) (i32.const 15)) (i32.const -4))))
    (call $place (local.get $h) (local.get $entry))
    (global.set $memoSize (i32.add (global.get $memoSize) (i32.const 1)))
    (local.get $n))

  ;; Tokens in the pieces of the text's bytes [$p, $n) up to where the scan stops (`stop()`).
  (func (export "scan") (param $p i32) (param $n i32) (result i32)
    (local $total i32) (local $e i32) (local $len i32)
    (block $stopped (loop $pieces
      (br_if $stopped (i32.ge_u (local.get $p) (local.get $n)))
      (local.set $e (call $pieceEnd (local.get $p) (local.get $n)))
      (br_if $stopped (i32.lt_s (local.get $e) (i32.const 0)))
      (local.set $len (i32.sub (local.get $e) (local.get $p)))
      (br_if $stopped (i32.gt_u (local.get $len) (i32.const 256)))
      (local.set $total
        (i32.add (local.get $total)
          (if (result i32) (i32.eq (local.get $len) (i32.const 1))
            (then (i32.const 1))
            (else (call $piece (local.get $p) (local.get $len))))))
      (local.set $p (local.get $e))
      (br $pieces)))
    (global.set $stop (local.get $p))
    (local.get $total))

  (func (export "stop") (result i32) (global.get $stop))
  (func (export "merged") (result i32) (global.get $merged))
)
