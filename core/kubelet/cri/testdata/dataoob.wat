;; dataoob validates, but its data segment lands past the end of its memory,
;; so it fails while being instantiated: exit code 128, reason StartError.
(module
  (memory (export "memory") 1)
  (data (i32.const 65535) "ab")
  (func (export "_start")))
