package lesson

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kubetab/kubetab/wasm/images"
)

// TestVerify plays small lessons on real clusters: the good ones must
// pass, and each broken one must fail with its file, line, step and the
// command's output.
func TestVerify(t *testing.T) {
	skipClusters(t)
	const front = "title: T\nsummary: S\nminutes: 5\nsetup:\n  - kubectl create namespace shop\n"
	// step1 makes a Deployment of 2 in shop; its check holds at once
	// (the failing cases wait only 3 s for their checks).
	const step1 = "## Create\n\n```run\nkubectl create deployment web --image=hello --replicas=2 -n shop\n```\n\n```check\nkubectl get deploy web -n shop -o jsonpath={.spec.replicas} == 2\n```\n\n"
	scale := func(solution, check string) string {
		return step1 + "## Scale\n\n```solution\n" + solution + "\n```\n\n```check\n" + check + "\n```\n"
	}
	tests := []struct {
		name  string
		file  string
		want  []string // fragments of the failures, in order; nil: it passes
		steps int      // steps that passed
	}{
		{"good", lessonFile(front, scale("kubectl scale deployment web --replicas=3 -n shop", "kubectl get deploy web -n shop -o jsonpath={.status.readyReplicas} == 3")), nil, 2},
		{"wrong solution", lessonFile(front, scale("kubectl scale deployment web --replicas=4 -n shop", "kubectl get deploy web -n shop -o jsonpath={.spec.replicas} == 3")),
			[]string{`l/01-x/en.md:25: step 2 "Scale": check does not hold after 3s: kubectl get deploy web -n shop -o jsonpath={.spec.replicas} == 3`, "(exit 0) 4"}, 1},
		{"check holds before its step", lessonFile(front, scale("kubectl scale deployment web --replicas=3 -n shop", "kubectl get deploy web -n shop")),
			[]string{`l/01-x/en.md:25: step 2 "Scale": check holds before the step: kubectl get deploy web -n shop`, "web    0/2"}, 1},
		{"failing run line", lessonFile(front, scale("kubectl scale deployment nothere --replicas=3 -n shop", "kubectl get deploy web -n shop -o jsonpath={.spec.replicas} == 3")),
			[]string{`l/01-x/en.md:21: step 2 "Scale": solution line exited 1: kubectl scale deployment nothere --replicas=3 -n shop (if the lesson means it to fail, end it with the comment # exit 1)`,
				`Error from server (NotFound): deployments.apps "nothere" not found`}, 1},
		{"a line meant to fail", lessonFile(front, scale("kubectl scale deployment nothere --replicas=3 -n shop  # exit 1\nkubectl scale deployment web --replicas=3 -n shop", "kubectl get deploy web -n shop -o jsonpath={.spec.replicas} == 3")), nil, 2},
		{"a line that fails otherwise than meant", lessonFile(front, scale("kubectl scale deployment nothere --replicas=3 -n shop # exit 2", "kubectl get deploy web -n shop -o jsonpath={.spec.replicas} == 3")),
			[]string{`l/01-x/en.md:21: step 2 "Scale": solution line exited 1, not 2 as its # exit 2 says`}, 1},
		{"failing setup line", lessonFile("title: T\nsummary: S\nminutes: 5\nsetup:\n  - kubectl create namespace shop\n  - kubectl create namespace shop\n", step1),
			[]string{`l/01-x/en.md:7: setup: setup line exited 1: kubectl create namespace shop`, `namespaces "shop" already exists`}, 0},
		{"a file block placed for apply", lessonFile("", "## Apply\n\n```yaml file=cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  color: blue\n```\n\n```run\nkubectl apply -f cm.yaml\n```\n\n```check\nkubectl get configmap settings -o jsonpath={.data.color} == blue\n```\n"), nil, 1},
		{"a file that is not there", lessonFile("", "## Apply\n\n```run\nkubectl apply -f cm.yaml\n```\n\n```check\nkubectl get configmap settings\n```\n"),
			[]string{`l/01-x/en.md:9: step 1 "Apply": run line exited 1: kubectl apply -f cm.yaml`, `the path "cm.yaml" does not exist`}, 0},
	}
	// The lessons that must pass get the usual 60 s a step; those that must
	// fail 3 s, all on one Verify, to see the progress keep their order.
	var good, bad []*Lesson
	for i, tt := range tests {
		l, err := Parse(fmt.Sprintf("l/%02d-x/en.md", i+1), []byte(tt.file))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if tt.want == nil {
			good = append(good, l)
		} else {
			bad = append(bad, l)
		}
	}
	goodReport := Verify(context.Background(), VerifyConfig{Images: images.New()}, good)
	var progress bytes.Buffer
	report := Verify(context.Background(), VerifyConfig{Images: images.New(), Timeout: 3 * time.Second, Progress: &progress}, bad)
	if len(report.Lessons) != len(bad) || len(goodReport.Lessons) != len(good) {
		t.Fatalf("%d+%d reports for %d+%d lessons", len(goodReport.Lessons), len(report.Lessons), len(good), len(bad))
	}
	nGood, nBad := 0, 0
	for i, tt := range tests {
		var r LessonReport
		if tt.want == nil {
			r = goodReport.Lessons[nGood]
			nGood++
		} else {
			r = report.Lessons[nBad]
			nBad++
		}
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, f := range r.Failures {
				got = append(got, f.String())
			}
			msg := strings.Join(got, "\n")
			if r.Steps != tt.steps {
				t.Errorf("%d steps passed, want %d; failures:\n%s", r.Steps, tt.steps, msg)
			}
			if tt.want == nil {
				if len(r.Failures) > 0 {
					t.Errorf("failed:\n%s", msg)
				}
				return
			}
			rest := msg
			for _, w := range tt.want {
				w = strings.ReplaceAll(w, "l/01-x/", fmt.Sprintf("l/%02d-x/", i+1))
				j := strings.Index(rest, w)
				if j < 0 {
					t.Fatalf("failures lack %q (in order); got:\n%s", w, msg)
				}
				rest = rest[j+len(w):]
			}
		})
	}
	if !goodReport.OK() || report.OK() || report.Failed() != len(bad) {
		t.Errorf("reports: good OK %v, %d of %d bad failed", goodReport.OK(), report.Failed(), len(bad))
	}
	// Progress keeps the lessons' order, whatever the workers did.
	var status, want []string
	for _, line := range strings.Split(progress.String(), "\n") {
		if strings.HasPrefix(line, "ok  ") || strings.HasPrefix(line, "FAIL") {
			status = append(status, strings.Join(strings.Fields(line)[:4], " "))
		}
	}
	for _, r := range report.Lessons {
		want = append(want, fmt.Sprintf("FAIL %s (en) %d/%d", r.Slug, r.Steps, r.Total))
	}
	if fmt.Sprint(status) != fmt.Sprint(want) {
		t.Errorf("progress order %v, want %v:\n%s", status, want, progress.String())
	}
}

// TestVerifyTestLesson verifies the test lesson in both languages, as
// kubetab lessons verify does.
func TestVerifyTestLesson(t *testing.T) {
	skipClusters(t)
	lessons, err := Load(os.DirFS("testdata/lessons"), ".")
	if err != nil {
		t.Fatal(err)
	}
	report := Verify(context.Background(), VerifyConfig{Images: images.New()}, lessons)
	for _, r := range report.Lessons {
		if len(r.Failures) > 0 || r.Steps != r.Total || r.Duration <= 0 {
			t.Errorf("%s: %d/%d steps in %s: %v", r.Path, r.Steps, r.Total, r.Duration, r.Failures)
		}
	}
	if len(report.Lessons) != 2 || !report.OK() {
		t.Errorf("report = %+v", report)
	}
}

// TestVerifyCancelled: a cancelled verification reports every lesson as
// not verified rather than passing it.
func TestVerifyCancelled(t *testing.T) {
	l, err := Parse("l/01-x/en.md", []byte(lessonFile("", okStep)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	report := Verify(ctx, VerifyConfig{Images: images.New(), Progress: io.Discard}, []*Lesson{l, l, l})
	if report.OK() || report.Failed() != 3 {
		t.Errorf("cancelled report = %+v", report)
	}
}

func TestExpectedExit(t *testing.T) {
	for line, want := range map[string]int{
		"kubectl get pods":                        0,
		"kubectl get pod x # exit 1":              1,
		"kubectl get pod x  #exit 1 ":             1,
		"kubectl get pod x # exits 1":             0,
		"echo '# exit 1'":                         0,
		"kubectl get x \\\n  -o name # exit 2":    2,
		"cat <<EOF > a # exit 3\nb # exit 1\nEOF": 3,
		"cat <<EOF > a\nb # exit 1\nEOF":          0,
	} {
		if got := ExpectedExit(line); got != want {
			t.Errorf("ExpectedExit(%q) = %d, want %d", line, got, want)
		}
	}
}

// skipClusters skips tests that start clusters under GOOS=js: there a
// lesson takes 10 s or more in Node; the verifier runs natively
// (kubetab lessons verify in ./build.sh test).
func skipClusters(t *testing.T) {
	t.Helper()
	if testing.Short() || runtime.GOOS == "js" {
		t.Skip("starts clusters (natively only)")
	}
}
