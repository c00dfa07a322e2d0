package kubectl

import "testing"

// TestGetFormats: -o jsonpath|jsonpath-as-json|custom-columns|go-template,
// --template, -L and --sort-by, and their bad-input wording.
func TestGetFormats(t *testing.T) {
	e := newEnv(t)
	e.cluster()
	e.files["cols.txt"] = "NAME          NODE\n.metadata.name .spec.nodeName\n"
	e.files["names.jsonpath"] = `{range .items[*]}{.metadata.name}{"\n"}{end}`
	golden(t, "get-formats", e.transcript(
		`get pods -o jsonpath={.items[*].metadata.name}`,
		`get pods -o 'jsonpath={range .items[*]}{.metadata.name}{"\t"}{.status.phase}{"\n"}{end}'`,
		`get pod web-7d4b9-x2x8q -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'`,
		`get nodes -o 'jsonpath={.items[?(@.spec.unschedulable==true)].metadata.name}'`,
		`get pods -o jsonpath-as-json={.items[*].metadata.name}`,
		`get pods -o jsonpath-file=names.jsonpath`,
		`get pods -o jsonpath={.items[0].spec.nope}`,
		`get namespace default -o jsonpath={.spec.nope} --allow-missing-template-keys=false`,
		`get pods -o jsonpath`,
		`get pods -o 'jsonpath={.items[0'`,
		`get pods -o custom-columns=NAME:.metadata.name,IMAGES:.spec.containers[*].image,NODE:.spec.nodeName`,
		`get pods -o custom-columns=NAME:.metadata.name --no-headers`,
		`get pods -o custom-columns-file=cols.txt`,
		`get pods -o custom-columns=NAME`,
		`get pods -o custom-columns=`,
		`get pod web-7d4b9-x2x8q -o 'go-template={{.metadata.name}} {{index .metadata.labels "app"}}{{"\n"}}'`,
		`get pods --template '{{range .items}}{{.metadata.name}}{{"\n"}}{{end}}'`,
		`get pods -o 'go-template={{.nope.deeper}}'`,
		`get pods -o 'go-template={{'`,
		`get pods -L app,pod-template-hash`,
		`get pods -A -L app --sort-by=.metadata.name`,
		`get pods --sort-by=.status.phase -o name`,
		`get pods --sort-by=.metadata.creationTimestamp -o custom-columns=NAME:.metadata.name`,
		`get pods --sort-by=.nope`,
		`get pods --sort-by='{.a}{.b}'`,
		`get pods -o jsonpath=x -o yaml=1`,
	))
}
