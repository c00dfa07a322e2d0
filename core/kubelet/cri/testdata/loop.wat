;; loop spins without calling anything: only the instrumentation's budget
;; check at its loop header (kubetab.yield) can end it, or, in a plain
;; (uninstrumented) cache, wazero's own stop check, which works natively only.
(module
  (memory (export "memory") 1)
  (func (export "_start")
    (loop $again (br $again))))
