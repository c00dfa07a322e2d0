package kubectl

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetab/kubetab/core/internal/rbacrule"
)

// `kubectl auth can-i` and `kubectl auth whoami` (upstream's
// pkg/cmd/auth/cani.go and whoami.go): questions to the API server's
// authorizer, asked by creating a SelfSubjectAccessReview or a
// SelfSubjectReview. With --as they ask about someone else, as that
// someone: the admin impersonates them.

func (s *session) newAuthCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "Inspect authorization",
		Long:  "Inspect authorization.",
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(s.newCanICommand(), s.newWhoAmICommand())
	return cmd
}

// knownResourceVerbs are the verbs can-i does not warn about.
var knownResourceVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "use", "bind", "impersonate", "*", "approve", "sign", "escalate", "attest"}

func (s *session) newCanICommand() *cobra.Command {
	var allNamespaces, quiet, list, noHeaders bool
	var subresource string
	cmd := &cobra.Command{
		Use:                   "can-i VERB [TYPE | TYPE/NAME | NONRESOURCEURL]",
		DisableFlagsInUseLine: true,
		Short:                 "Check whether an action is allowed",
		Long: `Check whether an action is allowed.

 VERB is a logical Kubernetes API verb like 'get', 'list', 'watch', 'delete', etc. TYPE is a Kubernetes resource. Shortcuts and groups will be resolved. NONRESOURCEURL is a partial URL that starts with "/". NAME is the name of a particular Kubernetes resource. This command pairs nicely with impersonation. See --as global flag.`,
		Example: `  # Check to see if I can create pods in any namespace
  kubectl auth can-i create pods --all-namespaces

  # Check to see if I can list deployments in my current namespace
  kubectl auth can-i list deployments.apps

  # Check to see if service account "foo" of namespace "dev" can list pods in the namespace "prod"
  # You must be allowed to use impersonation for the global option "--as"
  kubectl auth can-i list pods --as=system:serviceaccount:dev:foo -n prod

  # Check to see if I can do everything in my current namespace ("*" means all)
  kubectl auth can-i '*' '*'

  # Check to see if I can get the job named "bar" in namespace "foo"
  kubectl auth can-i list jobs.batch/bar -n foo

  # Check to see if I can read pod logs
  kubectl auth can-i get pods --subresource=log

  # Check to see if I can access the URL /logs/
  kubectl auth can-i get /logs/

  # Check to see if I can approve certificates.k8s.io
  kubectl auth can-i approve certificates.k8s.io

  # List all allowed actions in namespace "foo"
  kubectl auth can-i --list --namespace=foo`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				if len(args) != 0 {
					return errors.New("list option must be specified with no arguments")
				}
				if quiet || allNamespaces || subresource != "" {
					return errors.New("list option can't be specified with neither quiet, all-namespaces nor subresource options")
				}
				return s.canIList(noHeaders)
			}
			if len(args) != 2 {
				return errors.New("you must specify two arguments: verb resource or verb resource/resourceName.\nSee 'kubectl auth can-i -h' for help and examples.")
			}
			out := s.out()
			if quiet {
				out = discard{}
			}
			verb := args[0]
			spec := authzv1.SelfSubjectAccessReviewSpec{}
			if strings.HasPrefix(args[1], "/") {
				if subresource != "" {
					return errors.New("--subresource can not be used with NonResourceURL")
				}
				spec.NonResourceAttributes = &authzv1.NonResourceAttributes{Verb: verb, Path: args[1]}
				if !contains(knownNonResourceVerbs, verb) {
					fmt.Fprintf(s.errOut(), "Warning: verb '%s' is not a known verb\n\n", verb)
				}
			} else {
				typ, name, _ := strings.Cut(args[1], "/")
				ra := &authzv1.ResourceAttributes{Verb: verb, Subresource: subresource, Name: name}
				if !allNamespaces {
					ra.Namespace = s.namespace
				}
				// Upstream's warnings end in "\n" and its WarningPrinter adds
				// another: a blank line follows each.
				if typ == "*" {
					ra.Resource = "*"
				} else if res, err := s.resolve(typ); err == nil {
					ra.Group, ra.Resource = res.Group, res.Name
					if !res.Namespaced && !allNamespaces {
						fmt.Fprintf(s.errOut(), "Warning: resource '%s' is not namespace scoped%s\n\n", res.Name, inGroup(res.Group))
					}
				} else {
					// users and groups (for impersonate) are served but not discoverable.
					if name, group, _ := strings.Cut(strings.ToLower(typ), "."); group != "" || (name != "users" && name != "groups") {
						fmt.Fprintf(s.errOut(), "Warning: the server doesn't have a resource type '%s'%s\n\n", name, inGroup(group))
					}
					ra.Resource = typ
				}
				if !contains(knownResourceVerbs, verb) {
					fmt.Fprintf(s.errOut(), "Warning: verb '%s' is not a known verb\n\n", verb)
				}
				spec.ResourceAttributes = ra
			}
			if noHeaders {
				return errors.New("--no-headers cannot be set without --list specified")
			}
			body, _ := json.Marshal(&authzv1.SelfSubjectAccessReview{
				TypeMeta: metav1.TypeMeta{APIVersion: "authorization.k8s.io/v1", Kind: "SelfSubjectAccessReview"},
				Spec:     spec,
			})
			var rev authzv1.SelfSubjectAccessReview
			if err := s.client.into(s.ctx, request{method: http.MethodPost, path: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
				body: body, contentType: "application/json"}, &rev); err != nil {
				return err
			}
			if rev.Status.Allowed {
				fmt.Fprintln(out, "yes")
				return nil
			}
			msg := "no"
			if rev.Status.Reason != "" {
				msg += " - " + rev.Status.Reason
			}
			if rev.Status.EvaluationError != "" {
				msg += " - " + rev.Status.EvaluationError
			}
			fmt.Fprintln(out, msg)
			return errExit
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&allNamespaces, "all-namespaces", "A", false, "If true, check the specified action in all namespaces.")
	f.BoolVarP(&quiet, "quiet", "q", false, "If true, suppress output and just return the exit code.")
	f.StringVar(&subresource, "subresource", "", "SubResource such as pod/log or deployment/scale")
	f.BoolVar(&list, "list", false, "If true, prints all allowed actions.")
	f.BoolVar(&noHeaders, "no-headers", false, "If true, prints allowed actions without headers")
	return cmd
}

// knownNonResourceVerbs are the verbs can-i does not warn about for a URL.
var knownNonResourceVerbs = []string{"get", "put", "post", "head", "options", "delete", "patch", "*"}

// canIList is `kubectl auth can-i --list` (upstream RunAccessList): the
// rules a SelfSubjectRulesReview returns for the namespace, broken down,
// merged by resource and sorted, as `describe role` shows a role's.
func (s *session) canIList(noHeaders bool) error {
	body, _ := json.Marshal(&authzv1.SelfSubjectRulesReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "authorization.k8s.io/v1", Kind: "SelfSubjectRulesReview"},
		Spec:     authzv1.SelfSubjectRulesReviewSpec{Namespace: s.namespace},
	})
	var rev authzv1.SelfSubjectRulesReview
	if err := s.client.into(s.ctx, request{method: http.MethodPost, path: "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
		body: body, contentType: "application/json"}, &rev); err != nil {
		return err
	}
	st := rev.Status
	if st.Incomplete {
		fmt.Fprintf(s.errOut(), "Warning: the list may be incomplete: %v\n", st.EvaluationError)
	}
	var rules []rbacv1.PolicyRule
	for _, r := range st.ResourceRules {
		rules = append(rules, rbacv1.PolicyRule{Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames})
	}
	for _, r := range st.NonResourceRules {
		rules = append(rules, rbacv1.PolicyRule{Verbs: r.Verbs, NonResourceURLs: r.NonResourceURLs})
	}
	w := newTabWriter(s.out())
	if !noHeaders {
		fmt.Fprintln(w, "Resources\tNon-Resource URLs\tResource Names\tVerbs")
	}
	for _, r := range rbacrule.ForDisplay(rules) {
		fmt.Fprintln(w, ruleColumns(r))
	}
	return w.Flush()
}

// inGroup is what can-i's warnings add for a resource in a named group.
func inGroup(group string) string {
	if group == "" {
		return ""
	}
	return " in group '" + group + "'"
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func (s *session) newWhoAmICommand() *cobra.Command {
	return &cobra.Command{
		Use:                   "whoami",
		DisableFlagsInUseLine: true,
		Short:                 "Experimental: Check self subject attributes",
		Long: `Experimental: Check who you are and your attributes (groups, extra).

        This command is helpful to get yourself aware of the current user attributes,
        especially when dynamic authentication, e.g., token webhook, auth proxy, or OIDC provider,
        is enabled in the Kubernetes cluster.`,
		Example: `  # Get your subject attributes
  kubectl auth whoami`,
		RunE: func(cmd *cobra.Command, args []string) error {
			body, _ := json.Marshal(&authnv1.SelfSubjectReview{
				TypeMeta: metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "SelfSubjectReview"},
			})
			var rev authnv1.SelfSubjectReview
			if err := s.client.into(s.ctx, request{method: http.MethodPost, path: "/apis/authentication.k8s.io/v1/selfsubjectreviews",
				body: body, contentType: "application/json"}, &rev); err != nil {
				return err
			}
			u := rev.Status.UserInfo
			w := newTabWriter(s.out())
			fmt.Fprintln(w, "ATTRIBUTE\tVALUE")
			if u.Username != "" {
				fmt.Fprintf(w, "Username\t%s\n", u.Username)
			}
			if u.UID != "" {
				fmt.Fprintf(w, "UID\t%s\n", u.UID)
			}
			if len(u.Groups) > 0 {
				fmt.Fprintf(w, "Groups\t%v\n", u.Groups)
			}
			keys := make([]string, 0, len(u.Extra))
			for k := range u.Extra {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(w, "Extra: %s\t%v\n", k, u.Extra[k])
			}
			return w.Flush()
		},
	}
}
