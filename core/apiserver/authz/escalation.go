package authz

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kubetab/kubetab/core/internal/rbacrule"
)

// ConfirmNoEscalation is upstream's ConfirmNoEscalation
// (pkg/registry/rbac/validation/rule.go): nil when owner, the rules u
// holds, cover rules; otherwise the error that names every missing piece,
// compacted and sorted:
//
//	user "jane" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:
//	{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}
//
// resolution are the errors met collecting owner (a binding to a missing
// role); they make owner incomplete and are appended to the message.
func ConfirmNoEscalation(u *User, owner []rbacv1.PolicyRule, resolution []error, rules []rbacv1.PolicyRule) error {
	ok, missing := rbacrule.Covers(owner, rules)
	if ok {
		return nil
	}
	seen := map[string]bool{}
	var lines []string
	for _, r := range rbacrule.Compact(missing, false) {
		if s := rbacrule.CompactString(r); !seen[s] {
			seen[s] = true
			lines = append(lines, s)
		}
	}
	sort.Strings(lines)
	msg := fmt.Sprintf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s", u.Name, u.Groups, strings.Join(lines, "\n"))
	if len(resolution) > 0 {
		// Upstream formats a one-element list of its aggregate error.
		msg += fmt.Sprintf("; resolution errors: [%s]", aggregate(resolution))
	}
	return errors.New(msg)
}

// aggregate is the text of k8s.io/apimachinery's errors.NewAggregate: one
// error alone, several (without repeats) as "[a, b]".
func aggregate(errs []error) string {
	if len(errs) == 1 {
		return errs[0].Error()
	}
	seen := map[string]bool{}
	var msgs []string
	for _, e := range errs {
		if m := e.Error(); !seen[m] {
			seen[m] = true
			msgs = append(msgs, m)
		}
	}
	if len(msgs) == 1 {
		return msgs[0]
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}
