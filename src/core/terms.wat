;; The word reader's tables and inner loop in WebAssembly: what terms.ts's TermIndex runs once it has
;; read a text of WASM_MIN_UNITS UTF-16 units or more, instead of its JavaScript loop and tables (a
;; relevance prune reads every turn this way). It gives the same terms and ids, in the same order.
;;
;; It holds every term (id, lower-cased units) and every ASCII word met (its units and its terms'
;; ids), and reads a loaded text: each ASCII word is split, hashed and found as TermIndex finds it; a
;; new one's terms are made here as TermIndex's pushAsciiTerms makes them (the whole word lower-cased,
;; then its parts when it is a compound; stop words, one-letter words and one- or two-digit numbers
;; left out, a plural `s` cut), and their ids written out. It returns to JavaScript at a unit that
;; is not ASCII (JavaScript reads that word and asks for its terms' ids with `id`), or with a full
;; output.
;;
;; Why: a prune reads its transcript's turns once, and the JavaScript reader ran most of that read
;; before V8 had optimized it (a few hundred milliseconds on two cores, against about half of that
;; in a second read). WebAssembly is compiled before it first runs.
;;
;; `npm run build:wasm` compiles this file into terms-binary.ts (test/bpe-merge.test.ts checks that
;; the two agree).
;;
;; Memory (imported; terms-wasm.ts makes it, and every address below is fixed):
;;   [0, 16)           after each call: where a scan stopped, the ids it wrote out, the terms known,
;;                     the line breaks it met
;;   [64, 192)         1 for each ASCII unit that is part of a word (letters, digits, `_`), else 0
;;   [1024, 3072)      a term from JavaScript (`id`, `stop`) of at most 1024 units (a longer one is put
;;                     in room `space` takes from the heap)
;;   [3072, 35840)     the ids written out: at most OUT_CAP = 8192 a scan
;;   [35840, 101376)   the text being read: at most TEXT_UNITS = 32768 units
;;   [101376, 232448)  for each line break a scan met (when asked), the ids it had written out by then
;;   from 232448       the heap, allocated upwards and never freed (a table that doubles takes new
;;                     room; memory above the top is zero):
;;                     - tables of 8-byte slots (a hash, and an entry's address; 0: empty) for the
;;                       words, the terms and the stop words;
;;                     - the address of each term's entry, by id;
;;                     - entries: a word's [length, n, n ids, units], a term's [id, length, units],
;;                       a stop word's [0, length, units].
(module
  (import "env" "memory" (memory 1))
  (global $mult (mut i32) (i32.const 0))
  (global $top (mut i32) (i32.const 0))
  (global $wSlots (mut i32) (i32.const 0))
  (global $wMask (mut i32) (i32.const 0))
  (global $wCount (mut i32) (i32.const 0))
  (global $tSlots (mut i32) (i32.const 0))
  (global $tMask (mut i32) (i32.const 0))
  (global $tCount (mut i32) (i32.const 0))
  (global $tAt (mut i32) (i32.const 0))
  (global $tAtCap (mut i32) (i32.const 0))
  (global $sSlots (mut i32) (i32.const 0))
  (global $sMask (mut i32) (i32.const 0))
  ;; Ids written out by this call.
  (global $out (mut i32) (i32.const 0))

  ;; The word units' table, at 64 + unit: digits from 112, capitals and `_` from 128, small letters from 160.
  (data (i32.const 112)
    "\01\01\01\01\01\01\01\01\01\01\00\00\00\00\00\00"
    "\00\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\00\00\00\00\01"
    "\00\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\01\00\00\00\00\00")

  ;; ---- The heap

  ;; `bytes` (a multiple of 4) from the top of the heap, the memory grown if need be (doubled, or by
  ;; what is needed when it cannot double: growing a page at a time had V8 collect its heap again and
  ;; again, each grow being new memory outside it); 0 when it cannot grow. In 64 bits: the top of a
  ;; 4 GB memory does not wrap.
  (func $alloc (param $bytes i32) (result i32)
    (local $at i32) (local $need i64) (local $pages i32) (local $short i32)
    (local.set $at (global.get $top))
    (local.set $need (i64.add (i64.extend_i32_u (global.get $top)) (i64.extend_i32_u (local.get $bytes))))
    (if (i64.ge_u (local.get $need) (i64.const 0x100000000)) (then (return (i32.const 0))))
    (local.set $pages (memory.size))
    (if (i64.gt_u (local.get $need) (i64.shl (i64.extend_i32_u (local.get $pages)) (i64.const 16)))
      (then
        (local.set $short
          (i32.sub (i32.wrap_i64 (i64.shr_u (i64.add (local.get $need) (i64.const 65535)) (i64.const 16))) (local.get $pages)))
        (if (i32.eq (memory.grow (select (local.get $pages) (local.get $short) (i32.gt_u (local.get $pages) (local.get $short)))) (i32.const -1))
          (then
            (if (i32.eq (memory.grow (local.get $short)) (i32.const -1)) (then (return (i32.const 0))))))))
    (global.set $top (i32.wrap_i64 (local.get $need)))
    (local.get $at))

  ;; Puts (hash, entry) in the first free slot from the hash's.
  (func $place (param $slots i32) (param $mask i32) (param $hash i32) (param $entry i32)
    (local $at i32)
    (local.set $at (i32.and (local.get $hash) (local.get $mask)))
    (block $free
      (loop $probe
        (br_if $free (i32.eqz (i32.load offset=4 (i32.add (local.get $slots) (i32.shl (local.get $at) (i32.const 3))))))
        (local.set $at (i32.and (i32.add (local.get $at) (i32.const 1)) (local.get $mask)))
        (br $probe)))
    (local.set $at (i32.add (local.get $slots) (i32.shl (local.get $at) (i32.const 3))))
    (i32.store (local.get $at) (local.get $hash))
    (i32.store offset=4 (local.get $at) (local.get $entry)))

  ;; A table twice the size of `slots` (mask `mask`) holding its entries; 0 when there is no room.
  (func $doubled (param $slots i32) (param $mask i32) (result i32)
    (local $new i32) (local $k i32) (local $from i32)
    (local.set $new (call $alloc (i32.shl (i32.add (local.get $mask) (i32.const 1)) (i32.const 4))))
    (if (i32.eqz (local.get $new)) (then (return (i32.const 0))))
    (block $moved
      (loop $move
        (br_if $moved (i32.gt_u (local.get $k) (local.get $mask)))
        (local.set $from (i32.add (local.get $slots) (i32.shl (local.get $k) (i32.const 3))))
        (if (i32.load offset=4 (local.get $from))
          (then
            (call $place (local.get $new) (i32.add (i32.shl (local.get $mask) (i32.const 1)) (i32.const 1))
              (i32.load (local.get $from)) (i32.load offset=4 (local.get $from)))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $move)))
    (local.get $new))

  ;; ---- Units and hashes

  (func $unit (param $i i32) (result i32)
    (i32.load16_u offset=35840 (i32.shl (local.get $i) (i32.const 1))))

  ;; An ASCII code lower-cased.
  (func $lower (param $c i32) (result i32)
    (select (i32.or (local.get $c) (i32.const 32)) (local.get $c)
      (i32.lt_u (i32.sub (local.get $c) (i32.const 65)) (i32.const 26))))

  ;; TermIndex's `mixed`.
  (func $mixed (param $h i32) (result i32)
    (local.set $h (i32.mul (i32.xor (local.get $h) (i32.shr_u (local.get $h) (i32.const 16))) (i32.const 0x45d9f3b)))
    (i32.xor (local.get $h) (i32.shr_u (local.get $h) (i32.const 16))))

  ;; Whether the units at `entry` + 8 (`len` of them, as the entry's length at `entry` + 4 says) are
  ;; the `len` units at `at`, lower-cased first when `lowered` (ASCII's capitals).
  (func $same (param $entry i32) (param $at i32) (param $len i32) (param $lowered i32) (result i32)
    (local $k i32)
    (if (i32.ne (i32.load offset=4 (local.get $entry)) (local.get $len)) (then (return (i32.const 0))))
    (block $differ
      (loop $units
        (br_if $differ (i32.ge_u (local.get $k) (local.get $len)))
        (br_if $differ
          (i32.ne
            (i32.load16_u offset=8 (i32.add (local.get $entry) (i32.shl (local.get $k) (i32.const 1))))
            (if (result i32) (local.get $lowered)
              (then (call $lower (i32.load16_u (i32.add (local.get $at) (i32.shl (local.get $k) (i32.const 1))))))
              (else (i32.load16_u (i32.add (local.get $at) (i32.shl (local.get $k) (i32.const 1))))))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $units)))
    (i32.eq (local.get $k) (local.get $len)))

  ;; Copies `len` units from `from` to `to`, lower-cased when `lowered`.
  (func $copy (param $to i32) (param $from i32) (param $len i32) (param $lowered i32)
    (local $k i32) (local $c i32)
    (block $done
      (loop $units
        (br_if $done (i32.ge_u (local.get $k) (local.get $len)))
        (local.set $c (i32.load16_u (i32.add (local.get $from) (i32.shl (local.get $k) (i32.const 1)))))
        (if (local.get $lowered) (then (local.set $c (call $lower (local.get $c)))))
        (i32.store16 (i32.add (local.get $to) (i32.shl (local.get $k) (i32.const 1))) (local.get $c))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $units))))

  ;; Bytes of an entry of `words` i32s and `len` units, a multiple of 4.
  (func $entryBytes (param $words i32) (param $len i32) (result i32)
    (i32.add (i32.shl (local.get $words) (i32.const 2)) (i32.and (i32.add (i32.shl (local.get $len) (i32.const 1)) (i32.const 3)) (i32.const -4))))

  ;; ---- Terms

  ;; The id of the term of `len` units at `at` (lower-cased first when `lowered`), whose hash is
  ;; `hash`; a new term gets the next id. -1 when there is no room.
  (func $term (param $at i32) (param $len i32) (param $hash i32) (param $lowered i32) (result i32)
    (local $slot i32) (local $entry i32) (local $id i32) (local $grown i32)
    (local.set $slot (i32.and (local.get $hash) (global.get $tMask)))
    (block $new
      (loop $probe
        (local.set $entry (i32.add (global.get $tSlots) (i32.shl (local.get $slot) (i32.const 3))))
        (br_if $new (i32.eqz (i32.load offset=4 (local.get $entry))))
        (if (i32.eq (i32.load (local.get $entry)) (local.get $hash))
          (then
            (if (call $same (i32.load offset=4 (local.get $entry)) (local.get $at) (local.get $len) (local.get $lowered))
              (then (return (i32.load (i32.load offset=4 (local.get $entry))))))))
        (local.set $slot (i32.and (i32.add (local.get $slot) (i32.const 1)) (global.get $tMask)))
        (br $probe)))
    ;; Room for its id's address first: the entry is only made once everything it needs fits.
    (if (i32.eq (global.get $tCount) (global.get $tAtCap))
      (then
        (local.set $grown (call $alloc (i32.shl (global.get $tAtCap) (i32.const 3))))
        (if (i32.eqz (local.get $grown)) (then (return (i32.const -1))))
        (memory.copy (local.get $grown) (global.get $tAt) (i32.shl (global.get $tAtCap) (i32.const 2)))
        (global.set $tAt (local.get $grown))
        (global.set $tAtCap (i32.shl (global.get $tAtCap) (i32.const 1)))))
    (local.set $entry (call $alloc (call $entryBytes (i32.const 2) (local.get $len))))
    (if (i32.eqz (local.get $entry)) (then (return (i32.const -1))))
    (local.set $id (global.get $tCount))
    (i32.store (local.get $entry) (local.get $id))
    (i32.store offset=4 (local.get $entry) (local.get $len))
    (call $copy (i32.add (local.get $entry) (i32.const 8)) (local.get $at) (local.get $len) (local.get $lowered))
    (i32.store (i32.add (global.get $tAt) (i32.shl (local.get $id) (i32.const 2))) (local.get $entry))
    (call $place (global.get $tSlots) (global.get $tMask) (local.get $hash) (local.get $entry))
    (global.set $tCount (i32.add (local.get $id) (i32.const 1)))
    (if (i32.gt_u (i32.shl (global.get $tCount) (i32.const 1)) (global.get $tMask))
      (then
        (local.set $grown (call $doubled (global.get $tSlots) (global.get $tMask)))
        (if (i32.eqz (local.get $grown)) (then (return (i32.const -1))))
        (global.set $tSlots (local.get $grown))
        (global.set $tMask (i32.add (i32.shl (global.get $tMask) (i32.const 1)) (i32.const 1)))))
    (local.get $id))

  ;; Whether the `len` units at `at`, lower-cased, hashed `hash`, are a stop word.
  (func $isStop (param $at i32) (param $len i32) (param $hash i32) (result i32)
    (local $slot i32) (local $entry i32)
    (local.set $slot (i32.and (local.get $hash) (global.get $sMask)))
    (loop $probe
      (local.set $entry (i32.add (global.get $sSlots) (i32.shl (local.get $slot) (i32.const 3))))
      (if (i32.eqz (i32.load offset=4 (local.get $entry))) (then (return (i32.const 0))))
      (if (i32.eq (i32.load (local.get $entry)) (local.get $hash))
        (then
          (if (call $same (i32.load offset=4 (local.get $entry)) (local.get $at) (local.get $len) (i32.const 1))
            (then (return (i32.const 1))))))
      (local.set $slot (i32.and (i32.add (local.get $slot) (i32.const 1)) (global.get $sMask)))
      (br $probe))
    (i32.const 0))

  ;; TermIndex's pushRangeTerm: the term of the text's units [start, end) lower-cased, its id written
  ;; out; none for a stop word, a word of one unit or one of two digits; a plural `s` cut. 0 when
  ;; there is no room.
  (func $rangeTerm (param $start i32) (param $end i32) (result i32)
    (local $len i32) (local $head i32) (local $k i32) (local $last i32) (local $whole i32) (local $a i32) (local $b i32)
    (local $at i32) (local $id i32)
    (local.set $len (i32.sub (local.get $end) (local.get $start)))
    (if (i32.lt_u (local.get $len) (i32.const 2)) (then (return (i32.const 1))))
    (if (i32.lt_u (local.get $len) (i32.const 3))
      (then
        (local.set $a (call $unit (local.get $start)))
        (local.set $b (call $unit (i32.add (local.get $start) (i32.const 1))))
        (if (i32.and
              (i32.lt_u (i32.sub (local.get $a) (i32.const 48)) (i32.const 10))
              (i32.lt_u (i32.sub (local.get $b) (i32.const 48)) (i32.const 10)))
          (then (return (i32.const 1))))))
    (local.set $k (local.get $start))
    (block $hashed
      (loop $units
        (br_if $hashed (i32.ge_u (local.get $k) (i32.sub (local.get $end) (i32.const 1))))
        (local.set $head (i32.add (i32.mul (local.get $head) (global.get $mult)) (call $lower (i32.load16_u offset=35840 (i32.shl (local.get $k) (i32.const 1))))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $units)))
    (local.set $last (call $lower (call $unit (i32.sub (local.get $end) (i32.const 1)))))
    (local.set $whole (call $mixed (i32.add (i32.mul (local.get $head) (global.get $mult)) (local.get $last))))
    (local.set $at (i32.add (i32.const 35840) (i32.shl (local.get $start) (i32.const 1))))
    (if (call $isStop (local.get $at) (local.get $len) (local.get $whole)) (then (return (i32.const 1))))
    ;; A plural `s` cut, as asTerm cuts it.
    (if (i32.and
          (i32.and (i32.gt_u (local.get $len) (i32.const 3)) (i32.eq (local.get $last) (i32.const 115)))
          (i32.ne (call $lower (call $unit (i32.sub (local.get $end) (i32.const 2)))) (i32.const 115)))
      (then (local.set $id (call $term (local.get $at) (i32.sub (local.get $len) (i32.const 1)) (call $mixed (local.get $head)) (i32.const 1))))
      (else (local.set $id (call $term (local.get $at) (local.get $len) (local.get $whole) (i32.const 1)))))
    (if (i32.lt_s (local.get $id) (i32.const 0)) (then (return (i32.const 0))))
    (i32.store offset=3072 (i32.shl (global.get $out) (i32.const 2)) (local.get $id))
    (global.set $out (i32.add (global.get $out) (i32.const 1)))
    (i32.const 1))

  ;; TermIndex's splitsBefore: whether a compound word [start, end) splits before its unit `k`.
  (func $splitsBefore (param $k i32) (param $start i32) (param $end i32) (result i32)
    (local $before i32) (local $after i32)
    (if (i32.eq (local.get $k) (local.get $start)) (then (return (i32.const 0))))
    (if (i32.ge_u (i32.sub (call $unit (local.get $k)) (i32.const 65)) (i32.const 26)) (then (return (i32.const 0))))
    (local.set $before (call $unit (i32.sub (local.get $k) (i32.const 1))))
    (if (i32.lt_u (i32.sub (local.get $before) (i32.const 97)) (i32.const 26)) (then (return (i32.const 1))))
    (if (i32.lt_u (i32.sub (local.get $before) (i32.const 48)) (i32.const 10)) (then (return (i32.const 1))))
    (if (i32.ge_u (i32.sub (local.get $before) (i32.const 65)) (i32.const 26)) (then (return (i32.const 0))))
    (if (i32.ge_u (i32.add (local.get $k) (i32.const 1)) (local.get $end)) (then (return (i32.const 0))))
    (local.set $after (call $unit (i32.add (local.get $k) (i32.const 1))))
    (i32.lt_u (i32.sub (local.get $after) (i32.const 97)) (i32.const 26)))

  ;; TermIndex's pushAsciiTerms: the ids of the ASCII word [start, end)'s terms written out. 0 when there is no room.
  (func $wordTerms (param $start i32) (param $end i32) (result i32)
    (local $k i32) (local $compound i32) (local $part i32)
    (if (i32.eqz (call $rangeTerm (local.get $start) (local.get $end))) (then (return (i32.const 0))))
    (local.set $k (local.get $start))
    (block $checked
      (loop $check
        (br_if $checked (i32.ge_u (local.get $k) (local.get $end)))
        (if (i32.or (i32.eq (call $unit (local.get $k)) (i32.const 95)) (call $splitsBefore (local.get $k) (local.get $start) (local.get $end)))
          (then
            (local.set $compound (i32.const 1))
            (br $checked)))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $check)))
    (if (i32.eqz (local.get $compound)) (then (return (i32.const 1))))
    (local.set $part (local.get $start))
    (local.set $k (local.get $start))
    (block $split
      (loop $units
        (br_if $split (i32.ge_u (local.get $k) (local.get $end)))
        (if (i32.eq (call $unit (local.get $k)) (i32.const 95))
          (then
            ;; (A run of `_` leaves empty parts between its units: no term.)
            (if (i32.eqz (call $rangeTerm (local.get $part) (local.get $k))) (then (return (i32.const 0))))
            (local.set $part (i32.add (local.get $k) (i32.const 1))))
          (else
            (if (i32.and (i32.gt_u (local.get $k) (local.get $part)) (call $splitsBefore (local.get $k) (local.get $start) (local.get $end)))
              (then
                (if (i32.eqz (call $rangeTerm (local.get $part) (local.get $k))) (then (return (i32.const 0))))
                (local.set $part (local.get $k))))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $units)))
    (call $rangeTerm (local.get $part) (local.get $end)))

  ;; A word not met before: its terms' ids written out, and the word kept with them. 0 when there is no room.
  (func $newWord (param $start i32) (param $len i32) (param $hash i32) (result i32)
    (local $first i32) (local $n i32) (local $entry i32) (local $grown i32)
    (local.set $first (global.get $out))
    (if (i32.eqz (call $wordTerms (local.get $start) (i32.add (local.get $start) (local.get $len)))) (then (return (i32.const 0))))
    (local.set $n (i32.sub (global.get $out) (local.get $first)))
    (local.set $entry (call $alloc (call $entryBytes (i32.add (i32.const 2) (local.get $n)) (local.get $len))))
    (if (i32.eqz (local.get $entry)) (then (return (i32.const 0))))
    (i32.store (local.get $entry) (local.get $len))
    (i32.store offset=4 (local.get $entry) (local.get $n))
    (memory.copy (i32.add (local.get $entry) (i32.const 8)) (i32.add (i32.const 3072) (i32.shl (local.get $first) (i32.const 2))) (i32.shl (local.get $n) (i32.const 2)))
    (memory.copy
      (i32.add (local.get $entry) (i32.shl (i32.add (i32.const 2) (local.get $n)) (i32.const 2)))
      (i32.add (i32.const 35840) (i32.shl (local.get $start) (i32.const 1)))
      (i32.shl (local.get $len) (i32.const 1)))
    (call $place (global.get $wSlots) (global.get $wMask) (local.get $hash) (local.get $entry))
    (global.set $wCount (i32.add (global.get $wCount) (i32.const 1)))
    (if (i32.gt_u (i32.shl (global.get $wCount) (i32.const 1)) (global.get $wMask))
      (then
        (local.set $grown (call $doubled (global.get $wSlots) (global.get $wMask)))
        (if (i32.eqz (local.get $grown)) (then (return (i32.const 0))))
        (global.set $wSlots (local.get $grown))
        (global.set $wMask (i32.add (i32.shl (global.get $wMask) (i32.const 1)) (i32.const 1)))))
    (i32.const 1))

  ;; ---- Exports

  ;; Tables for the multiplier `mult` (TermIndex's hash), of `size` slots at first (a power of two). 0 when there is no room.
  (func (export "init") (param $mult i32) (param $size i32) (result i32)
    (global.set $mult (local.get $mult))
    (global.set $top (i32.const 232448))
    (global.set $wSlots (call $alloc (i32.shl (local.get $size) (i32.const 3))))
    (global.set $wMask (i32.sub (local.get $size) (i32.const 1)))
    (global.set $tSlots (call $alloc (i32.shl (local.get $size) (i32.const 3))))
    (global.set $tMask (i32.sub (local.get $size) (i32.const 1)))
    (global.set $tAtCap (local.get $size))
    (global.set $tAt (call $alloc (i32.shl (local.get $size) (i32.const 2))))
    (global.set $sSlots (call $alloc (i32.const 4096)))
    (global.set $sMask (i32.const 511))
    ;; Each of them had room (the first memory is made large enough for all four).
    (i32.and
      (i32.and (i32.ne (global.get $wSlots) (i32.const 0)) (i32.ne (global.get $tSlots) (i32.const 0)))
      (i32.and (i32.ne (global.get $tAt) (i32.const 0)) (i32.ne (global.get $sSlots) (i32.const 0)))))

  ;; The hash of the `len` units at `at` (a term from JavaScript), as TermIndex's hashOf.
  (func $hashAt (param $at i32) (param $len i32) (result i32)
    (local $k i32) (local $h i32)
    (block $done
      (loop $units
        (br_if $done (i32.ge_u (local.get $k) (local.get $len)))
        (local.set $h (i32.add (i32.mul (local.get $h) (global.get $mult)) (i32.load16_u (i32.add (local.get $at) (i32.shl (local.get $k) (i32.const 1))))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $units)))
    (call $mixed (local.get $h)))

  ;; Room in the heap for a term from JavaScript longer than 1024 units: its address; 0 when there is none.
  (func (export "space") (param $len i32) (result i32)
    (call $alloc (call $entryBytes (i32.const 0) (local.get $len))))

  ;; A stop word (lower case, `len` units at `at`). 0 when there is no room.
  (func (export "stop") (param $at i32) (param $len i32) (result i32)
    (local $entry i32)
    (local.set $entry (call $alloc (call $entryBytes (i32.const 2) (local.get $len))))
    (if (i32.eqz (local.get $entry)) (then (return (i32.const 0))))
    (i32.store offset=4 (local.get $entry) (local.get $len))
    (call $copy (i32.add (local.get $entry) (i32.const 8)) (local.get $at) (local.get $len) (i32.const 0))
    (call $place (global.get $sSlots) (global.get $sMask) (call $hashAt (local.get $at) (local.get $len)) (local.get $entry))
    (i32.const 1))

  ;; The id of the term of `len` units at `at` (a new one gets the next id); -1 when there is no room.
  (func (export "id") (param $at i32) (param $len i32) (result i32)
    (local $id i32)
    (local.set $id (call $term (local.get $at) (local.get $len) (call $hashAt (local.get $at) (local.get $len)) (i32.const 0)))
    (i32.store (i32.const 8) (global.get $tCount))
    (local.get $id))

  ;; The address of term `id`'s entry: its length at + 4, its units from + 8.
  (func (export "term") (param $id i32) (result i32)
    (i32.load (i32.add (global.get $tAt) (i32.shl (local.get $id) (i32.const 2)))))

  ;; Reads the loaded units [i, end): writes out the ids of each ASCII word's terms, up to where it
  ;; stops, and with `lines`, at each line break, how many it had written. Returns 0 at the end, 1
  ;; when the output is full, 2 at a unit that is not ASCII (the word there, or the one it ends,
  ;; starts where it stopped), 3 when there is no room (the word where it stopped is not read).
  ;; Where it stopped, the ids written out, the terms known and the line breaks are at [0, 16).
  (func (export "scan") (param $i i32) (param $end i32) (param $lines i32) (result i32)
    (local $c i32) (local $start i32) (local $h i32) (local $len i32) (local $at i32) (local $slot i32) (local $entry i32)
    (local $n i32) (local $stop i32) (local $units i32) (local $k i32) (local $bytes i32) (local $breaks i32)
    (global.set $out (i32.const 0))
    (local.set $stop (i32.const 0))
    (block $stopped
      (loop $next
        (br_if $stopped (i32.ge_u (local.get $i) (local.get $end)))
        (local.set $c (i32.load16_u offset=35840 (i32.shl (local.get $i) (i32.const 1))))
        (if (i32.ge_u (local.get $c) (i32.const 128))
          (then
            (local.set $stop (i32.const 2))
            (br $stopped)))
        (if (i32.eqz (i32.load8_u offset=64 (local.get $c)))
          (then
            (if (i32.and (local.get $lines) (i32.eq (local.get $c) (i32.const 10)))
              (then
                (i32.store offset=101376 (i32.shl (local.get $breaks) (i32.const 2)) (global.get $out))
                (local.set $breaks (i32.add (local.get $breaks) (i32.const 1)))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $next)))
        ;; Room for a word's terms: at most 33 (the whole word, and parts of two units or more).
        (if (i32.gt_u (global.get $out) (i32.const 8128))
          (then
            (local.set $stop (i32.const 1))
            (br $stopped)))
        ;; A word: its units hashed as TermIndex hashes them, up to one that is not part of a word.
        (local.set $start (local.get $i))
        (local.set $h (i32.const 0))
        (block $word
          (loop $units
            (local.set $h (i32.add (i32.mul (local.get $h) (global.get $mult)) (local.get $c)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br_if $word (i32.ge_u (local.get $i) (local.get $end)))
            (local.set $c (i32.load16_u offset=35840 (i32.shl (local.get $i) (i32.const 1))))
            (if (i32.ge_u (local.get $c) (i32.const 128))
              (then
                (local.set $i (local.get $start))
                (local.set $stop (i32.const 2))
                (br $stopped)))
            (br_if $units (i32.load8_u offset=64 (local.get $c)))))
        (local.set $len (i32.sub (local.get $i) (local.get $start)))
        ;; A word longer than 64 units is no term.
        (br_if $next (i32.gt_u (local.get $len) (i32.const 64)))
        (local.set $h (call $mixed (local.get $h)))
        (local.set $at (i32.add (i32.const 35840) (i32.shl (local.get $start) (i32.const 1))))
        (local.set $slot (i32.and (local.get $h) (global.get $wMask)))
        (block $found
          (loop $probe
            (local.set $entry (i32.add (global.get $wSlots) (i32.shl (local.get $slot) (i32.const 3))))
            (if (i32.eqz (i32.load offset=4 (local.get $entry)))
              (then
                (br_if $next (call $newWord (local.get $start) (local.get $len) (local.get $h)))
                (local.set $i (local.get $start))
                (local.set $stop (i32.const 3))
                (br $stopped)))
            (if (i32.eq (i32.load (local.get $entry)) (local.get $h))
              (then
                (local.set $entry (i32.load offset=4 (local.get $entry)))
                ;; The same word: its length, then its units (after its ids), four bytes at a time.
                (if (i32.eq (i32.load (local.get $entry)) (local.get $len))
                  (then
                    (local.set $units (i32.add (local.get $entry) (i32.shl (i32.add (i32.const 2) (i32.load offset=4 (local.get $entry))) (i32.const 2))))
                    (local.set $k (i32.const 0))
                    (local.set $bytes (i32.shl (local.get $len) (i32.const 1)))
                    (block $differ
                      (loop $pairs
                        (if (i32.gt_u (i32.add (local.get $k) (i32.const 4)) (local.get $bytes))
                          (then
                            ;; The last unit, if any.
                            (br_if $found (i32.ge_u (local.get $k) (local.get $bytes)))
                            (br_if $found
                              (i32.eq (i32.load16_u (i32.add (local.get $units) (local.get $k))) (i32.load16_u (i32.add (local.get $at) (local.get $k)))))
                            (br $differ)))
                        (br_if $differ (i32.ne (i32.load (i32.add (local.get $units) (local.get $k))) (i32.load (i32.add (local.get $at) (local.get $k)))))
                        (local.set $k (i32.add (local.get $k) (i32.const 4)))
                        (br $pairs)))))))
            (local.set $slot (i32.and (i32.add (local.get $slot) (i32.const 1)) (global.get $wMask)))
            (br $probe)))
        ;; Its terms' ids, written out.
        (local.set $n (i32.load offset=4 (local.get $entry)))
        (memory.copy
          (i32.add (i32.const 3072) (i32.shl (global.get $out) (i32.const 2)))
          (i32.add (local.get $entry) (i32.const 8))
          (i32.shl (local.get $n) (i32.const 2)))
        (global.set $out (i32.add (global.get $out) (local.get $n)))
        (br $next)))
    (i32.store (i32.const 0) (local.get $i))
    (i32.store (i32.const 4) (global.get $out))
    (i32.store (i32.const 8) (global.get $tCount))
    (i32.store (i32.const 12) (local.get $breaks))
    (local.get $stop))
)
