;; loop spins without calling anything: only wazero's own stop check (at loop
;; headers, WithCloseOnContextDone) can end it. Natively it stops; on js/wasm
;; it cannot yet (see the package doc), so its test runs natively only.
(module
  (memory (export "memory") 1)
  (func (export "_start")
    (loop $again (br $again))))
