;; badwasi imports a WASI name that does not exist in preview1.
(module
  (import "wasi_snapshot_preview1" "fd_teleport" (func $t))
  (memory (export "memory") 1)
  (func (export "_start") (call $t)))
