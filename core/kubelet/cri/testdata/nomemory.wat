;; nomemory has a _start but no exported memory, which WASI needs.
(module
  (func (export "_start")))
