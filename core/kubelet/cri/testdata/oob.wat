;; oob reads past the end of its one page of memory: exit code 139.
(module
  (memory (export "memory") 1)
  (func (export "_start") (drop (i32.load (i32.const 65536)))))
