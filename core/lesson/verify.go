package lesson

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kubetab/kubetab/core/cluster"
	"github.com/kubetab/kubetab/core/console"
	"github.com/kubetab/kubetab/core/session"
)

// The verifier plays every lesson the way a learner who does everything
// right would, against a real cluster, and proves that each step's checks
// turn from false to true because of the step:
//
//	fresh session (the lesson's nodes) ─▶ setup lines, each exit 0
//	for each step:
//	   place its files ─▶ every check must NOT hold ("check holds before the step")
//	   ─▶ run + solution lines in order, each exit 0 (or its # exit N)
//	   ─▶ poll every Poll until all checks hold, up to Timeout
//
// A lesson that rots (a renamed flag, a controller that changed) fails
// here, in ./build.sh test, before a learner meets it.

// VerifyConfig configures Verify.
type VerifyConfig struct {
	// Images is the registry the lessons' clusters pull from
	// (wasm/images.New()). Required.
	Images session.Catalog
	// Timeout is how long a step's checks may take to hold once its lines
	// have run. Default 60 s.
	Timeout time.Duration
	// Poll is the pause between two evaluations of a step's checks.
	// Default 200 ms.
	Poll time.Duration
	// LineTimeout bounds one console line: a setup, run or solution line,
	// or one evaluation of a check. Default 3 min, above the longest
	// `kubectl wait --timeout` a lesson uses: it is there to end a line that
	// never ends by itself (a -w, a -f), not to time the cluster.
	LineTimeout time.Duration
	// Workers is how many lessons run at once, each on its own cluster.
	// Default 2.
	Workers int
	// Progress, if set, gets each lesson's outcome and time as soon as it
	// and every lesson before it have finished, so the output keeps the
	// order of the lessons however the workers interleave.
	Progress io.Writer
}

// Report is what Verify found.
type Report struct {
	Lessons []LessonReport `json:"lessons"`
}

// OK says whether every lesson passed.
func (r Report) OK() bool { return r.Failed() == 0 }

// Failed is the number of lessons (one language each) that failed.
func (r Report) Failed() int {
	n := 0
	for _, l := range r.Lessons {
		if len(l.Failures) > 0 {
			n++
		}
	}
	return n
}

// LessonReport is one lesson in one language.
type LessonReport struct {
	Slug string `json:"slug"`
	Lang string `json:"lang"`
	Path string `json:"path"`
	// Steps is how many steps passed, of Total.
	Steps    int           `json:"steps"`
	Total    int           `json:"total"`
	Duration time.Duration `json:"duration"`
	Failures []Failure     `json:"failures,omitempty"`
}

// Failure is one thing that went wrong, where the lesson says it.
type Failure struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	// Step is the step's number; 0 is the lesson's setup or nodes.
	Step      int    `json:"step"`
	StepTitle string `json:"stepTitle,omitempty"`
	Msg       string `json:"msg"`
	// Output is the command's last output.
	Output string `json:"output,omitempty"`
}

func (f Failure) String() string {
	where := "setup"
	if f.Step > 0 {
		where = fmt.Sprintf("step %d %q", f.Step, f.StepTitle)
	}
	s := Problem{Path: f.Path, Line: f.Line, Msg: where + ": " + f.Msg}.String()
	if f.Output != "" {
		s += "\n" + indent(lastLines(f.Output, 10), "        ")
	}
	return s
}

// lastLines keeps the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return s
	}
	return "…\n" + strings.Join(lines[len(lines)-n:], "\n")
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// SessionRunner runs lines in a session's console, as the page does.
func SessionRunner(s *session.Session) Runner {
	return func(ctx context.Context, line string, stdin io.Reader, stdout, stderr io.Writer) int {
		return s.Run(ctx, line, console.Streams{In: stdin, Out: stdout, ErrOut: stderr})
	}
}

// Verify plays each lesson on a fresh cluster and reports, in the order of
// lessons, what passed and what did not. Verify returns when every lesson
// has finished or ctx is done.
func Verify(ctx context.Context, cfg VerifyConfig, lessons []*Lesson) Report {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 200 * time.Millisecond
	}
	if cfg.LineTimeout <= 0 {
		cfg.LineTimeout = 3 * time.Minute
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	reports := make([]LessonReport, len(lessons))
	done := make([]chan struct{}, len(lessons))
	for i := range done {
		done[i] = make(chan struct{})
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(cfg.Workers, len(lessons)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := ctx.Err(); err != nil {
					l := lessons[i]
					reports[i] = LessonReport{Slug: l.Slug, Lang: l.Lang, Path: l.Path, Total: len(l.Steps),
						Failures: []Failure{{Path: l.Path, Msg: "not verified: " + err.Error()}}}
				} else {
					reports[i] = verifyLesson(ctx, cfg, lessons[i])
				}
				close(done[i])
			}
		}()
	}
	go func() {
		for i := range lessons {
			next <- i
		}
		close(next)
	}()
	for i := range lessons {
		<-done[i]
		if cfg.Progress != nil {
			writeProgress(cfg.Progress, reports[i])
		}
	}
	wg.Wait()
	return Report{Lessons: reports}
}

func writeProgress(w io.Writer, r LessonReport) {
	status := "ok  "
	if len(r.Failures) > 0 {
		status = "FAIL"
	}
	fmt.Fprintf(w, "%s  %s (%s)  %d/%d steps  %.1fs\n", status, r.Slug, r.Lang, r.Steps, r.Total, r.Duration.Seconds())
	for _, f := range r.Failures {
		fmt.Fprintln(w, indent(f.String(), "      "))
	}
}

// lessonRun is one lesson being verified.
type lessonRun struct {
	cfg    VerifyConfig
	l      *Lesson
	rep    *LessonReport
	run    Runner
	step   *Step
	failed bool
}

func (r *lessonRun) fail(line int, output, format string, args ...any) {
	f := Failure{Path: r.l.Path, Line: line, Msg: fmt.Sprintf(format, args...), Output: output}
	if r.step != nil {
		f.Step, f.StepTitle = r.step.N, r.step.Title
	}
	r.rep.Failures = append(r.rep.Failures, f)
	r.failed = true
}

func verifyLesson(ctx context.Context, cfg VerifyConfig, l *Lesson) (rep LessonReport) {
	start := time.Now()
	rep = LessonReport{Slug: l.Slug, Lang: l.Lang, Path: l.Path, Total: len(l.Steps)}
	defer func() { rep.Duration = time.Since(start) }()
	r := &lessonRun{cfg: cfg, l: l, rep: &rep}
	specs, err := NodeSpecs(l.Nodes)
	if err != nil {
		r.fail(1, "", "%v", err)
		return rep
	}
	if cfg.Images == nil {
		r.fail(0, "", "VerifyConfig.Images is required")
		return rep
	}
	s, err := session.New(ctx, session.Config{
		Images:        cfg.Images,
		Cluster:       cluster.Config{NodeSpecs: specs},
		WaitForCaches: true,
	})
	if err != nil {
		r.fail(1, "", "start the cluster: %v", err)
		return rep
	}
	defer s.Close()
	r.run = SessionRunner(s)
	for i, line := range l.Setup {
		no := 1
		if i < len(l.setupLines) {
			no = l.setupLines[i]
		}
		if !r.line(ctx, line, no, "setup line") {
			return rep
		}
	}
	for i := range l.Steps {
		r.step = &l.Steps[i]
		if !r.verifyStep(ctx, s) {
			return rep
		}
		if !r.failed {
			rep.Steps++
		}
	}
	return rep
}

// verifyStep plays one step; false stops the lesson (the next steps build
// on this one).
func (r *lessonRun) verifyStep(ctx context.Context, s *session.Session) bool {
	st := r.step
	for _, b := range st.Blocks {
		if b.Kind == KindFile {
			if err := s.Files().WriteFile(b.File, []byte(b.Content)); err != nil {
				r.fail(b.Line, "", "place file %s: %v", b.File, err)
				return false
			}
		}
	}
	for _, c := range st.Checks {
		if res := r.eval(ctx, c); res.OK {
			r.fail(c.Line, res.Output, "check holds before the step: %s", c)
		}
	}
	for _, b := range st.Blocks {
		if b.Kind != KindRun && b.Kind != KindSolution {
			continue
		}
		for j, line := range b.Lines {
			no := b.Line
			if j < len(b.lineNos) {
				no = b.lineNos[j]
			}
			if !r.line(ctx, line, no, b.Kind+" line") {
				return false
			}
		}
	}
	deadline := time.Now().Add(r.cfg.Timeout)
	for {
		results := make([]Result, len(st.Checks))
		all := true
		for i, c := range st.Checks {
			results[i] = r.eval(ctx, c)
			all = all && results[i].OK
		}
		if all {
			return true
		}
		if ctx.Err() != nil || !time.Now().Before(deadline) {
			for i, c := range st.Checks {
				if !results[i].OK {
					r.fail(c.Line, explain(results[i]), "check does not hold after %s: %s", r.cfg.Timeout, c)
				}
			}
			return false
		}
		t := time.NewTimer(r.cfg.Poll)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
}

func (r *lessonRun) eval(ctx context.Context, c Check) Result {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.LineTimeout)
	defer cancel()
	return c.Eval(ctx, r.run)
}

// explain says what a check's command answered.
func explain(res Result) string {
	if res.Output == "" {
		return fmt.Sprintf("(exit %d, no output)", res.Code)
	}
	return fmt.Sprintf("(exit %d) %s", res.Code, res.Output)
}

// line runs one setup, run or solution line; false when it failed.
func (r *lessonRun) line(ctx context.Context, line string, no int, what string) bool {
	want := ExpectedExit(line)
	ctx, cancel := context.WithTimeout(ctx, r.cfg.LineTimeout)
	defer cancel()
	out := &capped{max: 64 << 10, keepTail: true}
	code := r.run(ctx, line, strings.NewReader(""), out, out)
	output := tail(strings.TrimSpace(out.String()), MaxOutput)
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		r.fail(no, output, "%s did not finish within %s: %s (a lesson's lines must end by themselves: no -w or -f without a timeout)", what, r.cfg.LineTimeout, firstLine(line))
		return false
	case code != want && want == 0:
		r.fail(no, output, "%s exited %d: %s (if the lesson means it to fail, end it with the comment # exit %d)", what, code, firstLine(line), code)
		return false
	case code != want:
		r.fail(no, output, "%s exited %d, not %d as its # exit %d says: %s", what, code, want, want, firstLine(line))
		return false
	}
	return true
}

func firstLine(s string) string {
	first, _, more := strings.Cut(s, "\n")
	if more {
		return first + " ..."
	}
	return first
}

// exitComment is a trailing "# exit N" comment.
var exitComment = regexp.MustCompile(`(?:^|\s)#\s*exit\s+([0-9]{1,3})\s*$`)

// ExpectedExit is the exit code a console line is meant to end with: 0,
// unless its first line (a heredoc's, a continued line's last) ends with
// the comment "# exit N", for a line that shows an error on purpose:
//
//	kubectl label configmap settings owner=alice --resource-version=1  # exit 1
func ExpectedExit(line string) int {
	target := line
	if _, _, ok := heredocOf(firstLine(line)); ok {
		target, _, _ = strings.Cut(line, "\n")
	} else if i := strings.LastIndexByte(line, '\n'); i >= 0 {
		target = line[i+1:]
	}
	m := exitComment.FindStringSubmatch(target)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
