// Package instrument rewrites a guest WebAssembly module, when its image is
// pulled, so that the guest hands the thread back to its host on its own: at
// every loop header and at the entry of every function that makes calls, the
// guest counts down a budget, and when it reaches zero it calls a function the
// host provides. The host decides there what the guest gets next: yield to
// other goroutines and to the browser's event loop, sleep out a CPU limit, or
// end the guest because its container was stopped.
//
// Upstream counterpart: none in Kubernetes. A Linux node gets all of this from
// the kernel (a timer interrupt preempts a process; cgroups throttle it; a
// signal kills it). WebAssembly has no interrupts, and wazero's own stop check
// needs a second goroutine to run, which never happens on js/wasm while a
// guest loops (see DESIGN.md, Verified facts). The technique is "fuel" or
// "gas" metering, as in wasmtime's consume_fuel, Wasmer's metering middleware
// or the Ethereum wasm gas injector, reduced to one counter.
//
// # What is inserted
//
// One mutable i32 global is added (the budget) and two host functions are
// imported from module "kubetab":
//
//	(import "kubetab" "yield"       (func (result i32)))          ;; returns the next budget
//	(import "kubetab" "memory_grow" (func (param i32) (result i32)))
//
// At each point that can repeat (the start of every loop body, and the entry
// of every function that calls another, so recursion is covered):
//
//	block
//	  global.get $budget
//	  i32.const 1
//	  i32.sub
//	  global.set $budget
//	  global.get $budget
//	  br_if 0            ;; budget left: go on
//	  call $yield
//	  global.set $budget
//	end
//
// A function that makes no calls and has no loops runs a bounded number of
// instructions, so its entry is left alone (hot leaf helpers stay fast). The
// sequence leaves the operand stack as it found it and opens a block of its
// own, so branch depths and a loop's parameters are untouched.
//
// Every memory.grow becomes a call to kubetab.memory_grow with the same type,
// so the host sees each growth and can end a guest that grows past its
// container's memory limit (OOMKilled) instead of letting the growth fail.
//
// Adding two imported functions shifts the index of every function the module
// defines by two; the rewriter fixes every place that names a function: call
// and return_call, ref.func (in code, in global and element initializers),
// exports, the start section, element segments and the "name" section.
//
// # Why not github.com/tetratelabs/wabin
//
// DESIGN.md suggested wabin to decode and encode modules. It round-trips what
// clang emits, but not every module wazero accepts: its encoder panics on a
// passive or declarative element segment ("TODO: support encoding for
// non-active elements"), never writes the DataCount section (a module using
// memory.init then fails validation) and writes a non-zero table index where
// a segment prefix belongs. A learner may load any module (Rust, TinyGo, Go),
// and wabin does not decode instructions at all, which is the part this
// package needs. So this package reads sections itself and copies every
// section it does not need to change byte for byte; only the type, import,
// global, export, start, element, code and "name" sections are re-encoded.
// Debug sections (".debug_*", "sourceMappingURL") are dropped: their code
// offsets would be wrong.
package instrument

import (
	"bytes"
	"errors"
	"fmt"
)

// Names of what the instrumented module imports.
const (
	HostModule = "kubetab"     // the import module of the host functions
	YieldName  = "yield"       // () -> i32: called when the budget is used up; returns the next budget
	GrowName   = "memory_grow" // (i32) -> i32: replaces memory.grow, same contract
)

// InitialBudget is the budget a guest starts with: the number of loop
// iterations and function entries before its first call to yield. It is
// small, so that even a slow engine (the interpreter in a browser) hears
// from a new guest within a few milliseconds; the host then sizes the
// budget to the guest's speed.
const InitialBudget = 1_000

// ErrUnsupported is a module this package cannot instrument: an instruction
// or type form it does not know (wazero would most likely reject it too).
var ErrUnsupported = errors.New("instrument: unsupported module")

// Stats counts what Module inserted.
type Stats struct {
	Functions    int // functions defined by the module
	EntryChecks  int // budget checks at function entries
	LoopChecks   int // budget checks at loop headers
	GrowsRelayed int // memory.grow instructions turned into host calls
}

// section ids, in the order a module must have them (tag, 13, sits between
// memory and global; datacount, 12, between element and code).
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secTable     = 4
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secElement   = 9
	secCode      = 10
	secData      = 11
	secDataCount = 12
	secTag       = 13
)

// rank orders non-custom sections as the binary format requires.
func rank(id byte) int {
	switch id {
	case secTag:
		return 55 // after memory (5), before global (6)
	case secDataCount:
		return 95 // after element (9), before code (10)
	}
	return int(id) * 10
}

var header = []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}

type section struct {
	id      byte
	name    string // custom sections
	content []byte // without id and size
}

// Import is one import of a module.
type Import struct {
	Module, Name string
	Kind         byte // 0 function, 1 table, 2 memory, 3 global, 4 tag
}

// Export is one export of a module.
type Export struct {
	Name string
	Kind byte // as Import.Kind
}

// Summary is what Inspect reports about a module.
type Summary struct {
	Imports []Import
	Exports []Export
}

// Inspect reads a module's imports and exports, with the same structural
// checks as Module (and none of wazero's validation): a cheap look at an
// upload before it is compiled.
func Inspect(wasm []byte) (Summary, error) {
	m, err := parse(wasm)
	if err != nil {
		return Summary{}, err
	}
	var s Summary
	s.Imports = m.imports
	for _, sec := range m.sections {
		if sec.id != secExport {
			continue
		}
		r := &reader{b: sec.content}
		n := r.u32()
		for i := uint32(0); i < n && r.err == nil; i++ {
			name := r.name()
			kind := r.byte()
			r.u32()
			s.Exports = append(s.Exports, Export{Name: name, Kind: kind})
		}
		if r.err != nil {
			return Summary{}, fmt.Errorf("%w: export section: %v", ErrUnsupported, r.err)
		}
	}
	return s, nil
}

// module is what Module needs to know about its input.
type module struct {
	imports         []Import
	sections        []section
	types           [][2][]byte // params, results per type index
	importedFuncs   uint32
	importedGlobals uint32
	definedGlobals  uint32
	functionCount   uint32 // from the function section
}

// Module returns an instrumented copy of a WebAssembly binary (see the package
// doc). The input must not import anything from HostModule already. The
// output is only as valid as the input: Module checks the structure it walks,
// not types; compile the result to validate it.
func Module(wasm []byte) ([]byte, Stats, error) {
	m, err := parse(wasm)
	if err != nil {
		return nil, Stats{}, err
	}
	return m.rewrite()
}

func parse(wasm []byte) (*module, error) {
	if len(wasm) < 8 || !bytes.Equal(wasm[:8], header) {
		return nil, fmt.Errorf("%w: not a WebAssembly 1.0 binary (bad magic number or version)", ErrUnsupported)
	}
	m := &module{}
	r := &reader{b: wasm, off: 8}
	last := 0
	for !r.eof() {
		id := r.byte()
		size := r.u32()
		content := r.bytes(int(size))
		if r.err != nil {
			return nil, fmt.Errorf("%w: section %d: %v", ErrUnsupported, id, r.err)
		}
		s := section{id: id, content: content}
		if id == secCustom {
			cr := &reader{b: content}
			s.name = cr.name()
			if cr.err != nil {
				return nil, fmt.Errorf("%w: custom section name: %v", ErrUnsupported, cr.err)
			}
		} else {
			if id > secTag {
				return nil, fmt.Errorf("%w: unknown section id %d", ErrUnsupported, id)
			}
			if rank(id) <= last {
				return nil, fmt.Errorf("%w: section %d out of order", ErrUnsupported, id)
			}
			last = rank(id)
		}
		m.sections = append(m.sections, s)
		if err := sane(id, content); err != nil {
			return nil, err
		}
		var err error
		switch id {
		case secType:
			err = m.parseTypes(content)
		case secImport:
			err = m.parseImports(content)
		case secFunction:
			err = m.parseFunctions(content)
		case secGlobal:
			cr := &reader{b: content}
			m.definedGlobals = cr.u32()
			err = cr.err
		}
		if err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Limits on what a module may declare, V8's (src/wasm/wasm-limits.h): a
// hostile module must not make the tab allocate gigabytes before wazero gets
// to say no. wazero v1.12 sizes some tables from the counts it reads before
// it checks that the section holds that many entries.
const (
	MaxLocals    = 50_000     // locals of one function
	MaxTableSize = 10_000_000 // initial size of a table
)

// sane checks that a section's vector count fits in its bytes (every entry
// takes at least one byte), and the table limit.
func sane(id byte, content []byte) error {
	switch id {
	case secType, secImport, secFunction, secTable, secMemory, secGlobal, secExport, secElement, secCode, secData, secTag:
	default:
		return nil
	}
	r := &reader{b: content}
	n := r.u32()
	if r.err != nil || uint64(n) > uint64(len(content)-r.off) {
		return fmt.Errorf("%w: section %d says it has %d entries in %d bytes", ErrUnsupported, id, n, len(content))
	}
	if id == secTable {
		for i := uint32(0); i < n && r.err == nil; i++ {
			if r.byte() == 0x40 { // table with an initializer expression (function references)
				return fmt.Errorf("%w: table with an initializer", ErrUnsupported)
			}
			flags := r.byte()
			min := r.uleb(64)
			if flags&1 != 0 {
				r.uleb(64)
			}
			if min > MaxTableSize {
				return fmt.Errorf("%w: table of %d elements (at most %d)", ErrUnsupported, min, MaxTableSize)
			}
		}
	}
	return nil
}

func (m *module) parseTypes(content []byte) error {
	r := &reader{b: content}
	n := r.u32()
	for i := uint32(0); i < n && r.err == nil; i++ {
		if form := r.byte(); form != 0x60 {
			return fmt.Errorf("%w: type %d has form 0x%x; only function types (0x60) are known", ErrUnsupported, i, form)
		}
		params := r.bytes(int(r.u32()))
		results := r.bytes(int(r.u32()))
		m.types = append(m.types, [2][]byte{params, results})
	}
	if r.err != nil {
		return fmt.Errorf("%w: type section: %v", ErrUnsupported, r.err)
	}
	return nil
}

// parseFunctions counts the functions and checks their type indices
// (wazero v1.12 panics on a call to a function whose type does not exist).
func (m *module) parseFunctions(content []byte) error {
	r := &reader{b: content}
	m.functionCount = r.u32()
	for i := uint32(0); i < m.functionCount && r.err == nil; i++ {
		if t := r.u32(); r.err == nil && int(t) >= len(m.types) {
			return fmt.Errorf("%w: function %d has type %d, which does not exist", ErrUnsupported, m.importedFuncs+i, t)
		}
	}
	if r.err != nil {
		return fmt.Errorf("%w: function section: %v", ErrUnsupported, r.err)
	}
	return nil
}

func (m *module) parseImports(content []byte) error {
	r := &reader{b: content}
	n := r.u32()
	for i := uint32(0); i < n && r.err == nil; i++ {
		mod := r.name()
		name := r.name()
		if r.err == nil && mod == HostModule {
			return fmt.Errorf("%w: it imports %s.%s: the %q import module is reserved for the runtime", ErrUnsupported, mod, name, HostModule)
		}
		kind := r.byte()
		m.imports = append(m.imports, Import{Module: mod, Name: name, Kind: kind})
		switch kind {
		case 0x00: // func: type index
			if t := r.u32(); r.err == nil && int(t) >= len(m.types) {
				return fmt.Errorf("%w: import %s.%s has type %d, which does not exist", ErrUnsupported, mod, name, t)
			}
			m.importedFuncs++
		case 0x01: // table: reftype, limits
			r.byte()
			r.limits()
		case 0x02: // memory: limits
			r.limits()
		case 0x03: // global: valtype, mut
			r.byte()
			r.byte()
			m.importedGlobals++
		case 0x04: // tag: attribute, type index
			r.byte()
			r.u32()
		default:
			return fmt.Errorf("%w: import %s.%s has unknown kind 0x%x", ErrUnsupported, mod, name, kind)
		}
	}
	if r.err != nil {
		return fmt.Errorf("%w: import section: %v", ErrUnsupported, r.err)
	}
	return nil
}

// typeIndex returns the index of the function type params -> results,
// appending it to extra (types to add after the existing ones) if needed.
func (m *module) typeIndex(params, results []byte, extra *[][2][]byte) uint32 {
	for i, t := range m.types {
		if bytes.Equal(t[0], params) && bytes.Equal(t[1], results) {
			return uint32(i)
		}
	}
	for i, t := range *extra {
		if bytes.Equal(t[0], params) && bytes.Equal(t[1], results) {
			return uint32(len(m.types) + i)
		}
	}
	*extra = append(*extra, [2][]byte{params, results})
	return uint32(len(m.types) + len(*extra) - 1)
}

const (
	i32 = 0x7f
)

// rewriter holds what the rewrite of each section needs.
type rewriter struct {
	m      *module
	yield  uint32 // function index of kubetab.yield
	grow   uint32 // function index of kubetab.memory_grow
	budget uint32 // global index of the budget
	stats  Stats
}

// fn maps a function index of the input to the output's.
func (w *rewriter) fn(idx uint32) uint32 {
	if idx >= w.m.importedFuncs {
		return idx + 2
	}
	return idx
}

func (m *module) rewrite() ([]byte, Stats, error) {
	var extraTypes [][2][]byte
	yieldType := m.typeIndex(nil, []byte{i32}, &extraTypes)
	growType := m.typeIndex([]byte{i32}, []byte{i32}, &extraTypes)
	w := &rewriter{
		m:      m,
		yield:  m.importedFuncs,
		grow:   m.importedFuncs + 1,
		budget: m.importedGlobals + m.definedGlobals,
	}
	w.stats.Functions = int(m.functionCount)

	// The sections to add or extend, by id.
	newTypes := func(old []byte) []byte {
		r := &reader{b: old}
		n := r.u32()
		rest := old[r.off:]
		var b []byte
		b = appendU32(b, n+uint32(len(extraTypes)))
		b = append(b, rest...)
		for _, t := range extraTypes {
			b = append(b, 0x60)
			b = appendU32(b, uint32(len(t[0])))
			b = append(b, t[0]...)
			b = appendU32(b, uint32(len(t[1])))
			b = append(b, t[1]...)
		}
		return b
	}
	newImports := func(old []byte) []byte {
		r := &reader{b: old}
		n := r.u32()
		rest := old[r.off:]
		var b []byte
		b = appendU32(b, n+2)
		b = append(b, rest...)
		b = appendName(b, HostModule)
		b = appendName(b, YieldName)
		b = append(b, 0x00)
		b = appendU32(b, yieldType)
		b = appendName(b, HostModule)
		b = appendName(b, GrowName)
		b = append(b, 0x00)
		b = appendU32(b, growType)
		return b
	}
	emptyVec := []byte{0x00}

	out := append([]byte(nil), header...)
	emitted := map[byte]bool{}
	// ensure emits a section the module lacks, before the first section that
	// must follow it.
	ensure := func(id byte, build func() []byte) {
		if !emitted[id] {
			out = appendSection(out, id, build())
			emitted[id] = true
		}
	}
	flushBefore := func(nextRank int) {
		if nextRank > rank(secType) && len(extraTypes) > 0 {
			ensure(secType, func() []byte { return newTypes(emptyVec) })
		}
		if nextRank > rank(secImport) {
			ensure(secImport, func() []byte { return newImports(emptyVec) })
		}
		if nextRank > rank(secGlobal) {
			ensure(secGlobal, func() []byte { return w.globals(emptyVec) })
		}
	}
	for _, s := range m.sections {
		if s.id == secCustom {
			switch {
			case s.name == "name":
				c, err := w.names(s.content)
				if err != nil {
					// Names are for stack traces only: drop a section we cannot read.
					continue
				}
				out = appendSection(out, secCustom, c)
			case len(s.name) >= 7 && s.name[:7] == ".debug_", s.name == "sourceMappingURL":
				// Code offsets moved: the debug info would lie.
			default:
				out = appendSection(out, secCustom, s.content)
			}
			continue
		}
		flushBefore(rank(s.id))
		var c []byte
		var err error
		switch s.id {
		case secType:
			c = newTypes(s.content)
		case secImport:
			c = newImports(s.content)
		case secGlobal:
			c, err = w.globalsRewrite(s.content)
		case secExport:
			c, err = w.exports(s.content)
		case secStart:
			r := &reader{b: s.content}
			idx := r.u32()
			if r.err != nil {
				err = fmt.Errorf("%w: start section: %v", ErrUnsupported, r.err)
			}
			c = appendU32(nil, w.fn(idx))
		case secElement:
			c, err = w.elements(s.content)
		case secCode:
			c, err = w.code(s.content)
		default:
			c = s.content
		}
		if err != nil {
			return nil, Stats{}, err
		}
		out = appendSection(out, s.id, c)
		emitted[s.id] = true
	}
	flushBefore(1 << 30)
	return out, w.stats, nil
}

// budgetGlobal is the added global: (global (mut i32) (i32.const InitialBudget)).
func budgetGlobal(b []byte) []byte {
	b = append(b, i32, 0x01, 0x41)
	b = appendS32(b, InitialBudget)
	return append(b, 0x0b)
}

// globals returns a global section with the budget global appended to old
// (which must need no rewriting: the empty vector).
func (w *rewriter) globals(old []byte) []byte {
	r := &reader{b: old}
	n := r.u32()
	b := appendU32(nil, n+1)
	b = append(b, old[r.off:]...)
	return budgetGlobal(b)
}

// globalsRewrite shifts ref.func in the initializers and appends the budget.
func (w *rewriter) globalsRewrite(content []byte) ([]byte, error) {
	r := &reader{b: content}
	n := r.u32()
	b := appendU32(nil, n+1)
	for i := uint32(0); i < n && r.err == nil; i++ {
		b = append(b, r.bytes(2)...) // valtype, mut
		var err error
		if b, err = w.constExpr(r, b); err != nil {
			return nil, fmt.Errorf("global %d: %w", i, err)
		}
	}
	if r.err != nil || !r.eof() {
		return nil, fmt.Errorf("%w: global section: %v", ErrUnsupported, orTrailing(r))
	}
	return budgetGlobal(b), nil
}

func (w *rewriter) exports(content []byte) ([]byte, error) {
	r := &reader{b: content}
	n := r.u32()
	b := appendU32(nil, n)
	for i := uint32(0); i < n && r.err == nil; i++ {
		b = appendName(b, r.name())
		kind := r.byte()
		idx := r.u32()
		if kind == 0x00 {
			idx = w.fn(idx)
		}
		b = append(b, kind)
		b = appendU32(b, idx)
	}
	if r.err != nil || !r.eof() {
		return nil, fmt.Errorf("%w: export section: %v", ErrUnsupported, orTrailing(r))
	}
	return b, nil
}

// elements rewrites the function indices of every element segment, in each
// of the eight encodings of WebAssembly 2.0 (the prefix's bits: 1 passive or
// declarative, 2 explicit table index or declarative, 4 expressions instead
// of function indices).
func (w *rewriter) elements(content []byte) ([]byte, error) {
	r := &reader{b: content}
	n := r.u32()
	b := appendU32(nil, n)
	for i := uint32(0); i < n && r.err == nil; i++ {
		prefix := r.u32()
		if prefix > 7 {
			return nil, fmt.Errorf("%w: element segment %d: prefix %d", ErrUnsupported, i, prefix)
		}
		b = appendU32(b, prefix)
		var err error
		if prefix&1 == 0 { // active
			if prefix&2 != 0 {
				b = appendU32(b, r.u32()) // table index
			}
			if b, err = w.constExpr(r, b); err != nil {
				return nil, fmt.Errorf("element segment %d offset: %w", i, err)
			}
		}
		if prefix&3 != 0 { // elemkind (0x00 = funcref) or reftype
			b = append(b, r.byte())
		}
		count := r.u32()
		b = appendU32(b, count)
		for j := uint32(0); j < count && r.err == nil; j++ {
			if prefix&4 == 0 {
				b = appendU32(b, w.fn(r.u32()))
			} else if b, err = w.constExpr(r, b); err != nil {
				return nil, fmt.Errorf("element segment %d item %d: %w", i, j, err)
			}
		}
	}
	if r.err != nil || !r.eof() {
		return nil, fmt.Errorf("%w: element section: %v", ErrUnsupported, orTrailing(r))
	}
	return b, nil
}

// constExpr copies a constant expression up to and including its end,
// shifting ref.func.
func (w *rewriter) constExpr(r *reader, b []byte) ([]byte, error) {
	for r.err == nil {
		op := r.byte()
		switch op {
		case 0x0b: // end
			return append(b, op), nil
		case 0x41: // i32.const
			b = append(b, op)
			b = appendS32(b, r.s32())
		case 0x42: // i64.const
			b = append(b, op)
			b = appendS64(b, r.s64())
		case 0x43:
			b = append(b, op)
			b = append(b, r.bytes(4)...)
		case 0x44:
			b = append(b, op)
			b = append(b, r.bytes(8)...)
		case 0x23: // global.get
			b = append(b, op)
			b = appendU32(b, r.u32())
		case 0xd0: // ref.null t
			b = append(b, op, r.byte())
		case 0xd2: // ref.func
			b = append(b, op)
			b = appendU32(b, w.fn(r.u32()))
		case 0x6a, 0x6b, 0x6c, 0x7c, 0x7d, 0x7e: // extended-const arithmetic
			b = append(b, op)
		case 0xfd: // v128.const
			if sub := r.u32(); sub != 12 {
				return nil, fmt.Errorf("%w: constant expression with SIMD op %d", ErrUnsupported, sub)
			}
			b = append(b, op)
			b = appendU32(b, 12)
			b = append(b, r.bytes(16)...)
		default:
			return nil, fmt.Errorf("%w: opcode 0x%x in a constant expression", ErrUnsupported, op)
		}
	}
	return nil, fmt.Errorf("%w: constant expression: %v", ErrUnsupported, r.err)
}

// names shifts the function indices of the "name" custom section's function
// names (1), local names (2) and label names (3); other subsections name no
// function and are copied as they are.
func (w *rewriter) names(content []byte) ([]byte, error) {
	r := &reader{b: content}
	b := appendName(nil, r.name())
	for !r.eof() && r.err == nil {
		id := r.byte()
		sub := r.bytes(int(r.u32()))
		if r.err != nil {
			break
		}
		var c []byte
		sr := &reader{b: sub}
		switch id {
		case 1: // namemap by function index
			n := sr.u32()
			c = appendU32(nil, n)
			for i := uint32(0); i < n && sr.err == nil; i++ {
				c = appendU32(c, w.fn(sr.u32()))
				c = appendName(c, sr.name())
			}
		case 2, 3: // indirect namemap: function index -> namemap
			n := sr.u32()
			c = appendU32(nil, n)
			for i := uint32(0); i < n && sr.err == nil; i++ {
				c = appendU32(c, w.fn(sr.u32()))
				m := sr.u32()
				c = appendU32(c, m)
				for j := uint32(0); j < m && sr.err == nil; j++ {
					c = appendU32(c, sr.u32())
					c = appendName(c, sr.name())
				}
			}
		default:
			c = sub
			sr.off = len(sub)
		}
		if sr.err != nil || !sr.eof() {
			return nil, fmt.Errorf("name subsection %d: %v", id, orTrailing(sr))
		}
		b = append(b, id)
		b = appendU32(b, uint32(len(c)))
		b = append(b, c...)
	}
	if r.err != nil {
		return nil, r.err
	}
	return b, nil
}

func (w *rewriter) code(content []byte) ([]byte, error) {
	r := &reader{b: content}
	n := r.u32()
	if r.err == nil && n != w.m.functionCount {
		return nil, fmt.Errorf("%w: %d function bodies for %d functions", ErrUnsupported, n, w.m.functionCount)
	}
	b := appendU32(nil, n)
	for i := uint32(0); i < n && r.err == nil; i++ {
		body := r.bytes(int(r.u32()))
		if r.err != nil {
			break
		}
		nb, err := w.body(body)
		if err != nil {
			return nil, fmt.Errorf("function %d (body %d): %w", w.m.importedFuncs+i, i, err)
		}
		b = appendU32(b, uint32(len(nb)))
		b = append(b, nb...)
	}
	if r.err != nil || !r.eof() {
		return nil, fmt.Errorf("%w: code section: %v", ErrUnsupported, orTrailing(r))
	}
	return b, nil
}

// check appends the budget check (see the package doc). In wazero's
// interpreter each instruction is one dispatch, so the common path is kept
// to six: get, const, sub, set, get, br_if.
func (w *rewriter) check(b []byte) []byte {
	b = append(b, 0x02, 0x40, 0x23) // block (empty); global.get
	b = appendU32(b, w.budget)
	b = append(b, 0x41, 0x01, 0x6b, 0x24) // i32.const 1; i32.sub; global.set
	b = appendU32(b, w.budget)
	b = append(b, 0x23) // global.get
	b = appendU32(b, w.budget)
	b = append(b, 0x0d, 0x00, 0x10) // br_if 0 (budget left: done); call
	b = appendU32(b, w.yield)
	b = append(b, 0x24) // global.set
	b = appendU32(b, w.budget)
	return append(b, 0x0b) // end
}

// body instruments one function body: locals, then instructions up to the
// body's final end.
func (w *rewriter) body(body []byte) ([]byte, error) {
	r := &reader{b: body}
	groups := r.u32()
	var locals uint64
	for i := uint32(0); i < groups && r.err == nil; i++ {
		locals += uint64(r.u32())
		r.byte() // valtype
	}
	if r.err != nil {
		return nil, fmt.Errorf("%w: locals: %v", ErrUnsupported, r.err)
	}
	if locals > MaxLocals {
		return nil, fmt.Errorf("%w: %d locals (at most %d)", ErrUnsupported, locals, MaxLocals)
	}
	localDecls := body[:r.off]

	var code []byte
	depth := 1 // the function's own block
	calls := false
	for depth > 0 && r.err == nil {
		if r.eof() {
			return nil, fmt.Errorf("%w: body ends without its final end", ErrUnsupported)
		}
		start := r.off
		op := r.byte()
		switch op {
		case 0x02, 0x03, 0x04: // block, loop, if: blocktype
			depth++
			r.blockType()
			code = append(code, body[start:r.off]...)
			if op == 0x03 {
				code = w.check(code)
				w.stats.LoopChecks++
			}
			continue
		case 0x0b: // end
			depth--
		case 0x10, 0x12: // call, return_call
			calls = true
			idx := r.u32()
			code = append(code, op)
			code = appendU32(code, w.fn(idx))
			continue
		case 0xd2: // ref.func
			idx := r.u32()
			code = append(code, op)
			code = appendU32(code, w.fn(idx))
			continue
		case 0x40: // memory.grow memidx
			if r.u32() != 0 {
				return nil, fmt.Errorf("%w: memory.grow of memory other than 0", ErrUnsupported)
			}
			code = append(code, 0x10)
			code = appendU32(code, w.grow)
			w.stats.GrowsRelayed++
			continue
		case 0x11, 0x13: // call_indirect, return_call_indirect: type, table
			calls = true
			r.u32()
			r.u32()
		default:
			if err := r.skipImmediates(op); err != nil {
				return nil, err
			}
		}
		if r.err != nil {
			break
		}
		code = append(code, body[start:r.off]...)
	}
	if r.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, r.err)
	}
	if !r.eof() {
		return nil, fmt.Errorf("%w: %d bytes after the body's final end", ErrUnsupported, len(body)-r.off)
	}
	out := append([]byte(nil), localDecls...)
	if calls {
		out = w.check(out)
		w.stats.EntryChecks++
	}
	return append(out, code...), nil
}

// skipImmediates reads the immediates of every instruction not handled in
// body. It knows WebAssembly 2.0 (what wazero runs), tail calls and the
// threads proposal's atomics; exception handling and GC are refused.
func (r *reader) skipImmediates(op byte) error {
	switch {
	case op == 0x00 || op == 0x01 || op == 0x05 || op == 0x0f || op == 0x1a || op == 0x1b:
		// unreachable, nop, else, return, drop, select
	case op == 0x0c || op == 0x0d: // br, br_if
		r.u32()
	case op == 0x0e: // br_table
		n := r.u32()
		for i := uint32(0); i <= n && r.err == nil; i++ {
			r.u32()
		}
	case op == 0x1c: // select t*
		r.bytes(int(r.u32()))
	case op >= 0x20 && op <= 0x26: // local.*, global.*, table.get/set
		r.u32()
	case op >= 0x28 && op <= 0x3e: // loads and stores
		r.memarg()
	case op == 0x3f: // memory.size
		r.u32()
	case op == 0x41:
		r.s32()
	case op == 0x42:
		r.s64()
	case op == 0x43:
		r.bytes(4)
	case op == 0x44:
		r.bytes(8)
	case op >= 0x45 && op <= 0xc4: // numeric, sign extension
	case op == 0xd0: // ref.null
		r.byte()
	case op == 0xd1: // ref.is_null
	case op == 0xfc:
		return r.skipFC()
	case op == 0xfd:
		return r.skipSIMD()
	case op == 0xfe:
		sub := r.u32()
		if sub == 0x03 { // atomic.fence
			r.byte()
		} else {
			r.memarg()
		}
	default:
		return fmt.Errorf("%w: opcode 0x%x", ErrUnsupported, op)
	}
	return nil
}

func (r *reader) skipFC() error {
	switch sub := r.u32(); {
	case sub <= 7: // saturating truncation
	case sub == 8: // memory.init data, mem
		r.u32()
		r.u32()
	case sub == 9: // data.drop
		r.u32()
	case sub == 10: // memory.copy mem, mem
		r.u32()
		r.u32()
	case sub == 11: // memory.fill mem
		r.u32()
	case sub == 12 || sub == 14: // table.init elem, table; table.copy t, t
		r.u32()
		r.u32()
	case sub == 13 || (sub >= 15 && sub <= 17): // elem.drop; table.grow, size, fill
		r.u32()
	default:
		return fmt.Errorf("%w: opcode 0xfc %d", ErrUnsupported, sub)
	}
	return nil
}

func (r *reader) skipSIMD() error {
	switch sub := r.u32(); {
	case sub <= 11 || sub == 92 || sub == 93: // loads, store, load zero
		r.memarg()
	case sub == 12 || sub == 13: // v128.const, i8x16.shuffle
		r.bytes(16)
	case sub >= 21 && sub <= 34: // extract and replace lane
		r.byte()
	case sub >= 84 && sub <= 91: // load and store lane
		r.memarg()
		r.byte()
	case sub <= 275: // everything else has no immediates
	default:
		return fmt.Errorf("%w: opcode 0xfd %d", ErrUnsupported, sub)
	}
	return nil
}

// reader reads the binary format; the first error sticks and later reads
// return zero values.
type reader struct {
	b   []byte
	off int
	err error
}

var errShort = errors.New("unexpected end")

func (r *reader) eof() bool { return r.off >= len(r.b) }

func (r *reader) byte() byte {
	if r.err != nil {
		return 0
	}
	if r.off >= len(r.b) {
		r.err = errShort
		return 0
	}
	c := r.b[r.off]
	r.off++
	return c
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b)-r.off {
		r.err = errShort
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

// uleb reads an unsigned LEB128 of at most bits bits.
func (r *reader) uleb(bits uint) uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		if shift >= bits {
			r.err = errors.New("integer too long")
			return 0
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
}

// sleb reads a signed LEB128 of at most bits bits.
func (r *reader) sleb(bits uint) int64 {
	var v int64
	var shift uint
	for {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		if shift >= bits {
			r.err = errors.New("integer too long")
			return 0
		}
		v |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
}

func (r *reader) u32() uint32 { return uint32(r.uleb(32)) }
func (r *reader) s32() int32  { return int32(r.sleb(32)) }
func (r *reader) s64() int64  { return r.sleb(64) }

func (r *reader) name() string { return string(r.bytes(int(r.u32()))) }

func (r *reader) limits() {
	flags := r.byte()
	r.uleb(64)
	if flags&1 != 0 {
		r.uleb(64)
	}
}

// memarg reads align (whose bit 6 announces a memory index, multi-memory)
// and offset.
func (r *reader) memarg() {
	align := r.u32()
	if align&0x40 != 0 {
		r.u32()
	}
	r.uleb(64)
}

// blockType reads an empty type (0x40), a value type, or a type index (s33).
func (r *reader) blockType() {
	if r.eof() {
		r.err = errShort
		return
	}
	switch c := r.b[r.off]; c {
	case 0x40, 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
		r.off++
	default:
		r.sleb(33)
	}
}

func orTrailing(r *reader) error {
	if r.err != nil {
		return r.err
	}
	return fmt.Errorf("%d trailing bytes", len(r.b)-r.off)
}

func appendU32(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func appendS64(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func appendS32(b []byte, v int32) []byte { return appendS64(b, int64(v)) }

func appendName(b []byte, s string) []byte {
	b = appendU32(b, uint32(len(s)))
	return append(b, s...)
}

func appendSection(b []byte, id byte, content []byte) []byte {
	b = append(b, id)
	b = appendU32(b, uint32(len(content)))
	return append(b, content...)
}
