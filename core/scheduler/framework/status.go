package framework

import (
	"errors"
	"strings"
)

// Code is the result kind of running a plugin (upstream: pkg/scheduler/framework
// interface.go, now k8s.io/kube-scheduler/framework). The values keep upstream's
// order, so a Code means the same number in both.
type Code int

// Codes. A nil *Status is Success.
const (
	// Success: the plugin ran and the pod may go on (for a filter: the node fits).
	Success Code = iota
	// Error: something went wrong inside the scheduler or a plugin, not with
	// the pod; the pod is retried after a back-off.
	Error
	// Unschedulable: the node does not fit the pod now, but could after a
	// change (another pod goes away, or preemption evicts one).
	Unschedulable
	// UnschedulableAndUnresolvable: the node does not fit and preemption
	// would not help (it is cordoned, or smaller than the pod's request).
	UnschedulableAndUnresolvable
	// Wait: a Permit plugin holds the pod before binding.
	Wait
	// Skip: a PreFilter or PreScore plugin says its Filter or Score has
	// nothing to do for this pod; a Bind plugin says "not my pod".
	Skip
	// Pending: the pod waits for something outside the scheduler.
	Pending
)

var codeNames = []string{"Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable", "Wait", "Skip", "Pending"}

func (c Code) String() string {
	if c < 0 || int(c) >= len(codeNames) {
		return "Unknown"
	}
	return codeNames[c]
}

// Status is what a plugin returns: a code, the reasons a learner reads in
// `kubectl describe pod` ("Insufficient cpu"), an optional error, and the
// plugin that produced it (set by the framework). A nil *Status is Success;
// every method works on nil.
type Status struct {
	code    Code
	reasons []string
	err     error
	plugin  string
}

// NewStatus returns a status with code and reasons.
func NewStatus(code Code, reasons ...string) *Status {
	return &Status{code: code, reasons: reasons}
}

// AsStatus wraps an error as an Error status; a nil error is a nil status.
func AsStatus(err error) *Status {
	if err == nil {
		return nil
	}
	return &Status{code: Error, err: err}
}

// Code of the status; Success for nil.
func (s *Status) Code() Code {
	if s == nil {
		return Success
	}
	return s.code
}

// Reasons are the error (if any) and the reasons, in that order.
func (s *Status) Reasons() []string {
	if s == nil {
		return nil
	}
	if s.err != nil {
		return append([]string{s.err.Error()}, s.reasons...)
	}
	return s.reasons
}

// Message joins the reasons with ", ".
func (s *Status) Message() string {
	if s == nil {
		return ""
	}
	return strings.Join(s.Reasons(), ", ")
}

// Plugin is the name of the plugin that returned the status ("" if unknown).
func (s *Status) Plugin() string {
	if s == nil {
		return ""
	}
	return s.plugin
}

// WithPlugin sets the plugin name and returns s. It does nothing on nil.
func (s *Status) WithPlugin(name string) *Status {
	if s != nil {
		s.plugin = name
	}
	return s
}

// WithError sets the error and returns s.
func (s *Status) WithError(err error) *Status {
	if s != nil {
		s.err = err
	}
	return s
}

// IsSuccess reports whether the code is Success.
func (s *Status) IsSuccess() bool { return s.Code() == Success }

// IsWait reports whether the code is Wait.
func (s *Status) IsWait() bool { return s.Code() == Wait }

// IsSkip reports whether the code is Skip.
func (s *Status) IsSkip() bool { return s.Code() == Skip }

// IsRejected reports whether the pod was rejected: Unschedulable,
// UnschedulableAndUnresolvable or Pending. An Error is not a rejection.
func (s *Status) IsRejected() bool {
	c := s.Code()
	return c == Unschedulable || c == UnschedulableAndUnresolvable || c == Pending
}

// AsError returns nil for Success and Skip, the error for an Error status, and
// otherwise an error with the message.
func (s *Status) AsError() error {
	if s.IsSuccess() || s.IsSkip() {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	return errors.New(s.Message())
}

// Equal compares code, reasons and plugin (and error messages).
func (s *Status) Equal(x *Status) bool {
	if s == nil || x == nil {
		return s.IsSuccess() && x.IsSuccess()
	}
	if s.code != x.code || s.plugin != x.plugin || len(s.reasons) != len(x.reasons) {
		return false
	}
	for i := range s.reasons {
		if s.reasons[i] != x.reasons[i] {
			return false
		}
	}
	if (s.err == nil) != (x.err == nil) {
		return false
	}
	return s.err == nil || s.err.Error() == x.err.Error()
}

// String is "Code: message" (or "Code" without reasons), for test output.
func (s *Status) String() string {
	if msg := s.Message(); msg != "" {
		return s.Code().String() + ": " + msg
	}
	return s.Code().String()
}
