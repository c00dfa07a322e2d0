;; unreachable traps at once, as C's abort() does: exit code 134.
(module
  (memory (export "memory") 1)
  (func (export "_start") unreachable))
