package printers

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ConfigMaps, Secrets, ServiceAccounts, Leases and PriorityClasses: the kinds
// whose rows are a name, a count or two, and an age.

var configMapColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Data", Type: "string", Description: corev1.ConfigMap{}.SwaggerDoc()["data"]},
	{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
}

var secretColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Type", Type: "string", Description: corev1.Secret{}.SwaggerDoc()["type"]},
	{Name: "Data", Type: "string", Description: corev1.Secret{}.SwaggerDoc()["data"]},
	{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
}

var serviceAccountColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Secrets", Type: "string", Description: corev1.ServiceAccount{}.SwaggerDoc()["secrets"]},
	{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
}

var leaseColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Holder", Type: "string", Description: coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]},
	{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
}

var priorityClassColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Value", Type: "integer", Description: schedulingv1.PriorityClass{}.SwaggerDoc()["value"]},
	{Name: "Global-Default", Type: "boolean", Description: schedulingv1.PriorityClass{}.SwaggerDoc()["globalDefault"]},
	{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	{Name: "PreemptionPolicy", Type: "string", Description: schedulingv1.PriorityClass{}.SwaggerDoc()["preemptionPolicy"]},
}

func init() {
	Register(&corev1.ConfigMap{}, configMapColumns, printConfigMap)
	Register(&corev1.Secret{}, secretColumns, printSecret)
	Register(&corev1.ServiceAccount{}, serviceAccountColumns, printServiceAccount)
	Register(&coordinationv1.Lease{}, leaseColumns, printLease)
	Register(&schedulingv1.PriorityClass{}, priorityClassColumns, printPriorityClass)
}

// printConfigMap: DATA counts data and binaryData keys.
func printConfigMap(obj runtime.Object, now time.Time) ([]any, error) {
	cm := obj.(*corev1.ConfigMap)
	return []any{cm.Name, int64(len(cm.Data) + len(cm.BinaryData)), Age(cm.CreationTimestamp, now)}, nil
}

func printSecret(obj runtime.Object, now time.Time) ([]any, error) {
	s := obj.(*corev1.Secret)
	return []any{s.Name, string(s.Type), int64(len(s.Data)), Age(s.CreationTimestamp, now)}, nil
}

func printServiceAccount(obj runtime.Object, now time.Time) ([]any, error) {
	sa := obj.(*corev1.ServiceAccount)
	return []any{sa.Name, int64(len(sa.Secrets)), Age(sa.CreationTimestamp, now)}, nil
}

func printLease(obj runtime.Object, now time.Time) ([]any, error) {
	l := obj.(*coordinationv1.Lease)
	holder := ""
	if l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	return []any{l.Name, holder, Age(l.CreationTimestamp, now)}, nil
}

// printPriorityClass is upstream's printPriorityClass. PREEMPTIONPOLICY is
// filled only for wide output there, which kube-apiserver always asks for, so
// `kubectl get priorityclasses` shows it.
func printPriorityClass(obj runtime.Object, now time.Time) ([]any, error) {
	pc := obj.(*schedulingv1.PriorityClass)
	policy := ""
	if pc.PreemptionPolicy != nil {
		policy = string(*pc.PreemptionPolicy)
	}
	return []any{pc.Name, int64(pc.Value), pc.GlobalDefault, Age(pc.CreationTimestamp, now), policy}, nil
}
