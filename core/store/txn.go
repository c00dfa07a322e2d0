package store

import (
	"bytes"
	"cmp"
	"errors"
)

// Transactions (upstream: etcd's Txn RPC, server/etcdserver/txn/txn.go, and
// clientv3's If/Then/Else). A transaction is:
//
//	If   every Compare holds        (read at the current revision)
//	Then run these operations       (the success branch)
//	Else run those                  (the failure branch)
//
// all under one lock, so nothing can happen between the compares and the
// writes. Every write of a transaction gets the same, single new revision; a
// transaction that writes nothing does not move the revision. A range inside
// a transaction sees the writes made before it in the same branch.
//
// kube-apiserver's guaranteed update is exactly this, with one compare:
//
//	If(ModRevision("/registry/pods/default/web") = 41)
//	Then(Put("/registry/pods/default/web", newJSON))
//	Else(Get("/registry/pods/default/web"))   // to retry from what is there now

// Errors a Txn is refused with before anything happens (etcd's wording).
var (
	ErrDuplicateKey = errors.New("store: duplicate key given in txn request")
	ErrTooManyOps   = errors.New("store: too many operations in txn request")
)

// MaxTxnOps is how many operations one branch of a Txn may hold (etcd's
// default --max-txn-ops).
const MaxTxnOps = 128

// CompareTarget is the part of a key a Compare looks at.
type CompareTarget int

const (
	TargetVersion CompareTarget = iota // KeyValue.Version; 0 for a missing key
	TargetCreate                       // KeyValue.CreateRevision; 0 for a missing key
	TargetMod                          // KeyValue.ModRevision; 0 for a missing key
	TargetValue                        // KeyValue.Value; a compare on a missing key's value is false
)

// CompareResult is the relation a Compare asks for.
type CompareResult int

const (
	Equal CompareResult = iota
	Greater
	Less
	NotEqual
)

func (r CompareResult) String() string {
	switch r {
	case Equal:
		return "="
	case Greater:
		return ">"
	case Less:
		return "<"
	case NotEqual:
		return "!="
	}
	return "?"
}

// Compare is one condition of a Txn: "the key's Target is Result this". A
// missing key compares as if all its numbers were 0 (so "CreateRevision = 0"
// means "does not exist"), but any compare of a missing key's value fails.
type Compare struct {
	Key    string
	Target CompareTarget
	Result CompareResult
	Number int64  // what TargetVersion, TargetCreate and TargetMod compare with
	Value  []byte // what TargetValue compares with (byte-wise)
}

// ModRevision is the Compare "key's ModRevision <result> rev".
func ModRevision(key string, result CompareResult, rev int64) Compare {
	return Compare{Key: key, Target: TargetMod, Result: result, Number: rev}
}

// CreateRevision is the Compare "key's CreateRevision <result> rev".
func CreateRevision(key string, result CompareResult, rev int64) Compare {
	return Compare{Key: key, Target: TargetCreate, Result: result, Number: rev}
}

// Version is the Compare "key's Version <result> v".
func Version(key string, result CompareResult, v int64) Compare {
	return Compare{Key: key, Target: TargetVersion, Result: result, Number: v}
}

// Value is the Compare "key's value <result> v".
func Value(key string, result CompareResult, v []byte) Compare {
	return Compare{Key: key, Target: TargetValue, Result: result, Value: v}
}

// holds evaluates the compare against kv, nil for a missing key.
func (c Compare) holds(kv *KeyValue) bool {
	if kv == nil {
		if c.Target == TargetValue {
			return false
		}
		kv = &KeyValue{}
	}
	var r int
	switch c.Target {
	case TargetVersion:
		r = cmp.Compare(kv.Version, c.Number)
	case TargetCreate:
		r = cmp.Compare(kv.CreateRevision, c.Number)
	case TargetMod:
		r = cmp.Compare(kv.ModRevision, c.Number)
	case TargetValue:
		r = bytes.Compare(kv.Value, c.Value)
	default:
		return false
	}
	switch c.Result {
	case Equal:
		return r == 0
	case Greater:
		return r > 0
	case Less:
		return r < 0
	case NotEqual:
		return r != 0
	}
	return false
}

// OpType is what an Op does.
type OpType int

const (
	RangeOp  OpType = iota // read [Key, End) at Rev
	PutOp                  // write Value at Key
	DeleteOp               // delete the keys in [Key, End)
)

// Op is one operation of a Txn. Build it with OpGet, OpPut or OpDelete.
type Op struct {
	Type  OpType
	Key   string
	End   string // range end with Range's conventions: "" is the single key Key
	Value []byte // for OpPut
	Rev   int64  // for OpRange: the revision to read at; 0 is the transaction's own view
}

// OpOption modifies an Op.
type OpOption func(*Op)

// WithPrefix makes a get or delete cover every key that starts with its key.
func WithPrefix() OpOption { return func(op *Op) { op.End = PrefixEnd(op.Key) } }

// WithRange makes a get or delete cover [key, end).
func WithRange(end string) OpOption { return func(op *Op) { op.End = end } }

// WithFromKey makes a get or delete cover every key >= its key.
func WithFromKey() OpOption { return func(op *Op) { op.End = "\x00" } }

// WithRev makes a get read at a past revision.
func WithRev(rev int64) OpOption { return func(op *Op) { op.Rev = rev } }

// OpGet reads key (or a range, with options).
func OpGet(key string, opts ...OpOption) Op { return newOp(Op{Type: RangeOp, Key: key}, opts) }

// OpPut writes value at key.
func OpPut(key string, value []byte) Op { return Op{Type: PutOp, Key: key, Value: value} }

// OpDelete deletes key (or a range, with options).
func OpDelete(key string, opts ...OpOption) Op { return newOp(Op{Type: DeleteOp, Key: key}, opts) }

func newOp(op Op, opts []OpOption) Op {
	for _, o := range opts {
		o(&op)
	}
	return op
}

// TxnRequest is a transaction: If all compares hold, Then, otherwise Else.
// (etcd's TxnRequest names them compare, success and failure.)
type TxnRequest struct {
	If   []Compare
	Then []Op
	Else []Op
}

// TxnResponse is the outcome of a Txn.
type TxnResponse struct {
	Succeeded bool         // the compares held and Then ran
	Revision  int64        // the store's revision after the transaction
	Responses []OpResponse // one per operation of the branch that ran, in order
}

// OpResponse is the result of one Op; exactly one field is set.
type OpResponse struct {
	Range  *RangeResponse
	Put    *PutResponse
	Delete *DeleteResponse
}

// RangeResponse holds the keys an OpGet read, sorted by key.
type RangeResponse struct {
	KVs []KeyValue
}

// PutResponse holds the key an OpPut wrote and its value before, if any.
type PutResponse struct {
	KV     KeyValue
	PrevKV *KeyValue
}

// DeleteResponse says how many keys an OpDelete removed, and their values.
type DeleteResponse struct {
	Deleted int64
	PrevKVs []KeyValue
}

// Txn runs a transaction atomically. It is refused as a whole, before any
// compare runs, with ErrEmptyKey (a put, or a single-key delete, of ""),
// ErrTooManyOps, ErrDuplicateKey (a branch that writes a key twice: two puts,
// or a put inside a range it also deletes), ErrRequestTooLarge (its keys
// and values together over Config.MaxRequestBytes), or ErrCompacted/ErrFuture (a get
// WithRev at a revision the store cannot read).
func (s *Store) Txn(req TxnRequest) (TxnResponse, error) {
	n := 0
	for _, ops := range [][]Op{req.Then, req.Else} {
		if err := checkOps(ops); err != nil {
			return TxnResponse{}, err
		}
		for _, op := range ops {
			n += len(op.Key) + len(op.End) + len(op.Value)
		}
	}
	for _, c := range req.If {
		n += len(c.Key) + len(c.Value)
	}
	if s.tooLarge(n) {
		return TxnResponse{}, ErrRequestTooLarge
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ops := range [][]Op{req.Then, req.Else} {
		for _, op := range ops {
			if op.Type == RangeOp && op.Rev != 0 {
				if _, err := s.readRev(op.Rev); err != nil {
					return TxnResponse{}, err
				}
			}
		}
	}

	resp := TxnResponse{Succeeded: true}
	for _, c := range req.If {
		var kv *KeyValue
		if ki := s.index.get(c.Key); ki != nil {
			kv = ki.current()
		}
		if !c.holds(kv) {
			resp.Succeeded = false
			break
		}
	}
	ops := req.Then
	if !resp.Succeeded {
		ops = req.Else
	}

	if err := s.logTxn(ops); err != nil {
		return TxnResponse{}, err
	}
	rev := s.rev + 1 // the revision of this transaction's writes, if any
	wrote := false
	for _, op := range ops {
		switch op.Type {
		case RangeOp:
			at := op.Rev
			if at == 0 {
				at = s.rev
				if wrote {
					at = rev
				}
			}
			latest := at == rev || (!wrote && at == s.rev)
			resp.Responses = append(resp.Responses, OpResponse{Range: &RangeResponse{KVs: s.rangeAt(op.Key, op.End, at, latest)}})
		case PutOp:
			ki := s.index.get(op.Key)
			var prev *KeyValue
			if ki != nil {
				if p := ki.current(); p != nil {
					cp := *p
					prev = &cp
				}
			}
			kv := s.put(ki, op.Key, op.Value, rev)
			wrote = true
			resp.Responses = append(resp.Responses, OpResponse{Put: &PutResponse{KV: *kv, PrevKV: prev}})
		case DeleteOp:
			var live []*keyIndex
			s.index.visit(op.Key, op.End, func(ki *keyIndex) bool {
				if ki.current() != nil {
					live = append(live, ki)
				}
				return true
			})
			dr := &DeleteResponse{}
			for _, ki := range live {
				dr.PrevKVs = append(dr.PrevKVs, *ki.current())
				s.delete(ki, rev)
				dr.Deleted++
				wrote = true
			}
			resp.Responses = append(resp.Responses, OpResponse{Delete: dr})
		}
	}
	if wrote {
		s.commit(rev)
	}
	resp.Revision = s.rev
	return resp, nil
}

// logTxn logs the writes of a branch about to run, if it writes at all: a
// put, or a delete of a range that holds a live key. Called with s.mu held.
func (s *Store) logTxn(ops []Op) error {
	if s.cfg.Log == nil || s.replaying {
		return nil
	}
	var writes []Op
	writesSomething := false
	for _, op := range ops {
		switch op.Type {
		case PutOp:
			writes, writesSomething = append(writes, op), true
		case DeleteOp:
			writes = append(writes, op)
			if !writesSomething {
				s.index.visit(op.Key, op.End, func(ki *keyIndex) bool {
					writesSomething = ki.current() != nil
					return !writesSomething
				})
			}
		}
	}
	if !writesSomething {
		return nil
	}
	return s.log(writes...)
}

// checkOps refuses a branch that etcd would refuse (v3rpc checkTxnRequest
// and checkIntervals).
func checkOps(ops []Op) error {
	if len(ops) > MaxTxnOps {
		return ErrTooManyOps
	}
	puts := map[string]bool{}
	for _, op := range ops {
		switch op.Type {
		case PutOp:
			if op.Key == "" {
				return ErrEmptyKey
			}
			if puts[op.Key] {
				return ErrDuplicateKey
			}
			puts[op.Key] = true
		case DeleteOp:
			if op.Key == "" && op.End == "" {
				return ErrEmptyKey
			}
		}
	}
	for _, op := range ops {
		if op.Type != DeleteOp {
			continue
		}
		for k := range puts {
			if inRange(k, op.Key, op.End) {
				return ErrDuplicateKey
			}
		}
	}
	return nil
}
