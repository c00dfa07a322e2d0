;; spam prints "x" lines as fast as it can and never sleeps: a stop must end
;; it at its next write, also on js/wasm where nothing else runs meanwhile.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  ;; iovec {buf: 8, len: 2} at 0, "x\n" at 8; fd_write stores the count at 16.
  (data (i32.const 0) "\08\00\00\00\02\00\00\00x\n")
  (func (export "_start")
    (loop $again
      (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16)))
      (br $again))))
