package kubectl

import (
	"errors"
	"fmt"
	"io"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// errExit makes a command fail with exit code 1 after it printed its own
// errors (kubectl's cmdutil.ErrExit).
var errExit = errors.New("exit")

// verbatimError is printed as it is, without the "error: " prefix: what
// cmdutil.CheckErr does with an exit-code error such as `kubectl run
// --attach`'s "pod default/job terminated (Error)".
type verbatimError string

func (e verbatimError) Error() string { return string(e) }

// multiError is several errors of one command, printed one per line (a
// kubectl get of several names where some do not exist).
type multiError []error

// Unwrap lets errors.Is see through (a cancelled context among them).
func (m multiError) Unwrap() []error { return m }

func (m multiError) Error() string {
	msgs := make([]string, len(m))
	for i, e := range m {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// noResourceError is meta.NoResourceMatchError: a resource name that
// discovery does not know.
type noResourceError struct{ resource string }

func (e *noResourceError) Error() string {
	return fmt.Sprintf("the server doesn't have a resource type %q", e.resource)
}

// printError writes err as kubectl's cmdutil.CheckErr does:
//
//	Error from server (NotFound): pods "x" not found      an API error
//	The Deployment "web" is invalid: spec.replicas: ...   a validation error
//	error: unknown command "foo" for "kubectl"            anything else
func printError(w io.Writer, err error) {
	if m, ok := err.(multiError); ok {
		for _, e := range m {
			if len(m) == 1 {
				printError(w, e)
				continue
			}
			// Several errors are upstream's MultipleErrors: an API error
			// keeps "Error from server (...)", any other error is bare.
			msg := errorMessage(e)
			if se := (*apierrors.StatusError)(nil); !errors.As(e, &se) || se != e {
				msg = strings.TrimPrefix(msg, "error: ")
			}
			if !strings.HasSuffix(msg, "\n") {
				msg += "\n"
			}
			io.WriteString(w, msg)
		}
		return
	}
	msg := errorMessage(err)
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	io.WriteString(w, msg)
}

func errorMessage(err error) string {
	var se *apierrors.StatusError
	if errors.As(err, &se) && se == err {
		st := se.Status()
		if st.Reason == metav1.StatusReasonInvalid {
			return invalidMessage(st)
		}
		switch {
		case st.Reason == metav1.StatusReasonUnauthorized:
			return fmt.Sprintf("error: You must be logged in to the server (%s)", st.Message)
		case st.Reason != "":
			return fmt.Sprintf("Error from server (%s): %s", st.Reason, se.Error())
		default:
			return fmt.Sprintf("Error from server: %s", se.Error())
		}
	}
	var ve verbatimError
	if errors.As(err, &ve) {
		return string(ve)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "error: ") {
		msg = "error: " + msg
	}
	return msg
}

// invalidMessage is kubectl's wording for a 422 Invalid answer:
// The Deployment "web" is invalid: spec.replicas: Invalid value: -1: must be ...
func invalidMessage(st metav1.Status) string {
	d := st.Details
	s := "The request is invalid"
	if d == nil {
		if st.Message != "" {
			s += ": " + st.Message
		}
		return s
	}
	if d.Kind != "" || d.Name != "" {
		s = fmt.Sprintf("The %s %q is invalid", d.Kind, d.Name)
	} else if st.Message != "" && len(d.Causes) == 0 {
		s += ": " + st.Message
	}
	var causes []string
	seen := map[string]bool{}
	for _, c := range d.Causes {
		m := fmt.Sprintf("%s: %s", c.Field, c.Message)
		if !seen[m] {
			seen[m] = true
			causes = append(causes, m)
		}
	}
	switch len(causes) {
	case 0:
		return s
	case 1:
		return s + ": " + causes[0]
	default:
		var b strings.Builder
		b.WriteString(s + ": \n")
		for _, c := range causes {
			b.WriteString("* " + c + "\n")
		}
		return b.String()
	}
}
