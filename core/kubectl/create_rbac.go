package kubectl

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The generators of `kubectl create role`, `create clusterrole`, `create
// rolebinding` and `create clusterrolebinding` (upstream's
// pkg/cmd/create/create_role.go, create_clusterrole.go,
// create_rolebinding.go and create_clusterrolebinding.go).
var (
	rolesResource               = apiResource{Group: rbacv1.GroupName, Version: "v1", Name: "roles", Kind: "Role", Namespaced: true}
	clusterRolesResource        = apiResource{Group: rbacv1.GroupName, Version: "v1", Name: "clusterroles", Kind: "ClusterRole"}
	roleBindingsResource        = apiResource{Group: rbacv1.GroupName, Version: "v1", Name: "rolebindings", Kind: "RoleBinding", Namespaced: true}
	clusterRoleBindingsResource = apiResource{Group: rbacv1.GroupName, Version: "v1", Name: "clusterrolebindings", Kind: "ClusterRoleBinding"}
)

var (
	validResourceVerbs    = []string{"*", "get", "delete", "list", "create", "update", "patch", "watch", "proxy", "deletecollection", "use", "bind", "escalate", "impersonate"}
	validNonResourceVerbs = []string{"*", "get", "post", "put", "delete", "patch", "head", "options"}
	// specialVerbs apply only to some resources: "can not perform 'bind' on 'pods' in group ''".
	specialVerbs = map[string][]struct{ group, resource string }{
		"use":         {{"policy", "podsecuritypolicies"}, {"extensions", "podsecuritypolicies"}},
		"bind":        {{"rbac.authorization.k8s.io", "roles"}, {"rbac.authorization.k8s.io", "clusterroles"}},
		"escalate":    {{"rbac.authorization.k8s.io", "roles"}, {"rbac.authorization.k8s.io", "clusterroles"}},
		"impersonate": {{"", "users"}, {"", "serviceaccounts"}, {"", "groups"}, {"authentication.k8s.io", "userextras"}, {"authentication.k8s.io", "uids"}},
	}
)

// roleRule is what --verb, --resource and --resource-name say.
type roleRule struct {
	verbs, resources, resourceNames, nonResourceURLs []string
}

func (r *roleRule) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringSliceVar(&r.verbs, "verb", nil, "Verb that applies to the resources contained in the rule")
	f.StringSliceVar(&r.resources, "resource", nil, "Resource that the rule applies to")
	f.StringArrayVar(&r.resourceNames, "resource-name", nil, "Resource in the white list that the rule applies to, repeat this flag for multiple items")
}

// resourceOption is one --resource: resource.group/subresource.
type resourceOption struct{ group, resource, sub string }

func parseResourceOptions(list []string) []resourceOption {
	var out []resourceOption
	for _, r := range list {
		var o resourceOption
		main, sub, hasSub := strings.Cut(r, "/")
		if hasSub {
			o.sub = sub
		}
		name, group, hasGroup := strings.Cut(main, ".")
		o.resource, o.group = name, group
		if o.resource == "*" && !hasGroup && !hasSub {
			return []resourceOption{o}
		}
		out = append(out, o)
	}
	return out
}

// rules validates the rule and builds it, one PolicyRule per API group
// (upstream's generateResourcePolicyRules). strictVerbs refuses an unknown
// resource verb (a Role) rather than warning (a ClusterRole).
func (s *session) rules(r *roleRule, strictVerbs bool) ([]rbacv1.PolicyRule, error) {
	verbs := r.verbs
	for _, v := range verbs {
		if v == "*" {
			verbs = []string{"*"}
			break
		}
	}
	if len(verbs) == 0 {
		return nil, errors.New("at least one verb must be specified")
	}
	if len(r.resources) == 0 && len(r.nonResourceURLs) == 0 {
		if strictVerbs {
			return nil, errors.New("at least one resource must be specified")
		}
		return nil, errors.New("one of resource or nonResourceURL must be specified")
	}
	if len(r.resources) > 0 {
		for _, v := range verbs {
			if !contains(validResourceVerbs, v) {
				if strictVerbs {
					return nil, fmt.Errorf("invalid verb: '%s'", v)
				}
				fmt.Fprintf(s.errOut(), "Warning: '%s' is not a standard resource verb\n", v)
			}
		}
	}
	for _, v := range verbs {
		if len(r.nonResourceURLs) > 0 && !contains(validNonResourceVerbs, v) {
			return nil, fmt.Errorf("invalid verb: '%s' for nonResourceURL", v)
		}
	}
	for _, u := range r.nonResourceURLs {
		if u == "*" {
			continue
		}
		if !strings.HasPrefix(u, "/") {
			return nil, errors.New("nonResourceURL should start with /")
		}
		if strings.ContainsRune(u[:len(u)-1], '*') {
			return nil, errors.New("nonResourceURL only supports wildcard matches when '*' is at the end")
		}
	}
	byGroup := map[string][]string{}
	for _, o := range parseResourceOptions(r.resources) {
		if o.resource == "" {
			return nil, errors.New("resource must be specified if apiGroup/subresource specified")
		}
		group, resource := o.group, o.resource
		var resolveErr error
		if o.resource != "*" {
			arg := o.resource
			if o.group != "" {
				arg += "." + o.group
			}
			if res, err := s.resolve(arg); err == nil {
				group, resource = res.Group, res.Name
			} else if o.group != "" {
				resolveErr = fmt.Errorf("the server doesn't have a resource type %q in group %q", o.resource, o.group)
			} else {
				resolveErr = err
			}
			for _, v := range verbs {
				allowed, special := specialVerbs[v]
				if !special {
					continue
				}
				match := false
				for _, a := range allowed {
					if a.group == group && a.resource == resource {
						match, resolveErr = true, nil
					}
				}
				if !match {
					return nil, fmt.Errorf("can not perform '%s' on '%s' in group '%s'", v, resource, group)
				}
			}
			if resolveErr != nil {
				return nil, resolveErr
			}
		}
		if o.sub != "" {
			resource += "/" + o.sub
		}
		if !contains(byGroup[group], resource) {
			byGroup[group] = append(byGroup[group], resource)
		}
	}
	groups := make([]string, 0, len(byGroup))
	for g := range byGroup {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	var rules []rbacv1.PolicyRule
	for _, g := range groups {
		rules = append(rules, rbacv1.PolicyRule{Verbs: verbs, APIGroups: []string{g}, Resources: byGroup[g], ResourceNames: r.resourceNames})
	}
	if len(r.nonResourceURLs) > 0 {
		rules = append(rules, rbacv1.PolicyRule{Verbs: verbs, NonResourceURLs: r.nonResourceURLs})
	}
	return rules, nil
}

func (s *session) newCreateRoleCommand() *cobra.Command {
	pf := &printFlags{}
	rule := &roleRule{}
	cmd := &cobra.Command{
		Use:                   "role NAME --verb=verb --resource=resource.group/subresource [--resource-name=resourcename] [--dry-run=server|client|none]",
		DisableFlagsInUseLine: true,
		Short:                 "Create a role with single rule",
		Long:                  "Create a role with single rule.",
		Example: `  # Create a role named "pod-reader" that allows user to perform "get", "watch" and "list" on pods
  kubectl create role pod-reader --verb=get --verb=list --verb=watch --resource=pods

  # Create a role named "pod-reader" with ResourceName specified
  kubectl create role pod-reader --verb=get --resource=pods --resource-name=readablepod --resource-name=anotherpod

  # Create a role named "foo" with API Group specified
  kubectl create role foo --verb=get,list,watch --resource=rs.apps

  # Create a role named "foo" with SubResource specified
  kubectl create role foo --verb=get,list,watch --resource=pods,pods/status`,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := nameFromArgs(cmd, args)
			if err != nil {
				return err
			}
			rules, err := s.rules(rule, true)
			if err != nil {
				return err
			}
			role := &rbacv1.Role{
				TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Rules:      rules,
			}
			return s.createGenerated(rolesResource, role, pf, func(err error) error { return err })
		},
	}
	rule.add(cmd)
	pf.add(cmd)
	return cmd
}

func (s *session) newCreateClusterRoleCommand() *cobra.Command {
	pf := &printFlags{}
	rule := &roleRule{}
	var aggregation map[string]string
	cmd := &cobra.Command{
		Use:                   "clusterrole NAME --verb=verb --resource=resource.group [--resource-name=resourcename] [--dry-run=server|client|none]",
		DisableFlagsInUseLine: true,
		Short:                 "Create a cluster role",
		Long:                  "Create a cluster role.",
		Example: `  # Create a cluster role named "pod-reader" that allows user to perform "get", "watch" and "list" on pods
  kubectl create clusterrole pod-reader --verb=get,list,watch --resource=pods

  # Create a cluster role named "pod-reader" with ResourceName specified
  kubectl create clusterrole pod-reader --verb=get --resource=pods --resource-name=readablepod --resource-name=anotherpod

  # Create a cluster role named "foo" with API Group specified
  kubectl create clusterrole foo --verb=get,list,watch --resource=rs.apps

  # Create a cluster role named "foo" with SubResource specified
  kubectl create clusterrole foo --verb=get,list,watch --resource=pods,pods/status

  # Create a cluster role name "foo" with NonResourceURL specified
  kubectl create clusterrole "foo" --verb=get --non-resource-url=/logs/*

  # Create a cluster role name "monitoring" with AggregationRule specified
  kubectl create clusterrole monitoring --aggregation-rule="rbac.example.com/aggregate-to-monitoring=true"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := nameFromArgs(cmd, args)
			if err != nil {
				return err
			}
			cr := &rbacv1.ClusterRole{
				TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
				ObjectMeta: metav1.ObjectMeta{Name: name},
			}
			if len(aggregation) > 0 {
				if len(rule.nonResourceURLs) > 0 || len(rule.verbs) > 0 || len(rule.resources) > 0 || len(rule.resourceNames) > 0 {
					return errors.New("aggregation rule must be specified without nonResourceURLs, verbs, resources or resourceNames")
				}
				cr.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: aggregation}}}
			} else if cr.Rules, err = s.rules(rule, false); err != nil {
				return err
			}
			return s.createGenerated(clusterRolesResource, cr, pf, func(err error) error { return err })
		},
	}
	rule.add(cmd)
	cmd.Flags().StringSliceVar(&rule.nonResourceURLs, "non-resource-url", nil, "A partial url that user should have access to.")
	cmd.Flags().StringToStringVar(&aggregation, "aggregation-rule", nil, "An aggregation label selector for combining ClusterRoles.")
	pf.add(cmd)
	return cmd
}

// newCreateRoleBindingCommand is `create rolebinding` or, cluster-wide,
// `create clusterrolebinding`.
func (s *session) newCreateRoleBindingCommand(cluster bool) *cobra.Command {
	pf := &printFlags{}
	var role, clusterRole string
	var users, groups, serviceAccounts []string
	cmd := &cobra.Command{
		Use:                   "rolebinding NAME --clusterrole=NAME|--role=NAME [--user=username] [--group=groupname] [--serviceaccount=namespace:serviceaccountname] [--dry-run=server|client|none]",
		DisableFlagsInUseLine: true,
		Short:                 "Create a role binding for a particular role or cluster role",
		Long:                  "Create a role binding for a particular role or cluster role.",
		Example: `  # Create a role binding for user1, user2, and group1 using the admin cluster role
  kubectl create rolebinding admin --clusterrole=admin --user=user1 --user=user2 --group=group1

  # Create a role binding for service account monitoring:sa-dev using the admin role
  kubectl create rolebinding admin-binding --role=admin --serviceaccount=monitoring:sa-dev`,
	}
	if cluster {
		cmd.Use = "clusterrolebinding NAME --clusterrole=NAME [--user=username] [--group=groupname] [--serviceaccount=namespace:serviceaccountname] [--dry-run=server|client|none]"
		cmd.Short = "Create a cluster role binding for a particular cluster role"
		cmd.Long = "Create a cluster role binding for a particular cluster role."
		cmd.Example = `  # Create a cluster role binding for user1, user2, and group1 using the cluster-admin cluster role
  kubectl create clusterrolebinding cluster-admin --clusterrole=cluster-admin --user=user1 --user=user2 --group=group1`
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		name, err := nameFromArgs(cmd, args)
		if err != nil {
			return err
		}
		if !cluster && (clusterRole == "") == (role == "") {
			return errors.New("exactly one of clusterrole or role must be specified")
		}
		ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole}
		if role != "" {
			ref.Kind, ref.Name = "Role", role
		}
		var subjects []rbacv1.Subject
		for _, u := range users {
			subjects = append(subjects, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: u})
		}
		for _, g := range groups {
			subjects = append(subjects, rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: g})
		}
		for _, sa := range serviceAccounts {
			ns, n, ok := strings.Cut(sa, ":")
			if !ok || ns == "" || n == "" || strings.Contains(n, ":") {
				return errors.New("serviceaccount must be <namespace>:<name>")
			}
			subjects = append(subjects, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: n})
		}
		if cluster {
			b := &rbacv1.ClusterRoleBinding{
				TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
				ObjectMeta: metav1.ObjectMeta{Name: name}, RoleRef: ref, Subjects: subjects,
			}
			return s.createGenerated(clusterRoleBindingsResource, b, pf, func(err error) error { return fmt.Errorf("failed to create clusterrolebinding: %v", err) })
		}
		b := &rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: name}, RoleRef: ref, Subjects: subjects,
		}
		return s.createGenerated(roleBindingsResource, b, pf, func(err error) error { return fmt.Errorf("failed to create rolebinding: %v", err) })
	}
	f := cmd.Flags()
	if cluster {
		f.StringVar(&clusterRole, "clusterrole", "", "ClusterRole this ClusterRoleBinding should reference")
		_ = cmd.MarkFlagRequired("clusterrole")
	} else {
		f.StringVar(&clusterRole, "clusterrole", "", "ClusterRole this RoleBinding should reference")
		f.StringVar(&role, "role", "", "Role this RoleBinding should reference")
	}
	f.StringArrayVar(&users, "user", nil, "Usernames to bind to the role. The flag can be repeated to add multiple users.")
	f.StringArrayVar(&groups, "group", nil, "Groups to bind to the role. The flag can be repeated to add multiple groups.")
	f.StringArrayVar(&serviceAccounts, "serviceaccount", nil, "Service accounts to bind to the role, in the format <namespace>:<name>. The flag can be repeated to add multiple service accounts.")
	pf.add(cmd)
	return cmd
}
