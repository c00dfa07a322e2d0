;; reactor is a WASI library ("_initialize"), not a program: pulling it fails.
(module
  (memory (export "memory") 1)
  (func (export "_initialize")))
