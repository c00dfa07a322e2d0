;; grow asks for 64 more pages (4 MiB) and exits 0 if it got them, 1 if not.
;; Under a memory limit an instrumented guest is killed at the memory.grow
;; (OOMKilled); a plain one sees memory.grow fail and exits 1.
(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    (call $exit (i32.eq (memory.grow (i32.const 64)) (i32.const -1)))))
