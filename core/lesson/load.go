package lesson

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"sort"
	"strings"
)

// Load reads the lessons under dir in fsys: every dir/<nn>-<slug>/en.md and
// ja.md, sorted by folder, then language (en before ja). dir may also be one
// lesson's folder. Each lesson must come in every language, and its
// languages must agree (Compare).
//
// Problems in any file come back together as one *ParseError; the lessons
// that had none are returned beside it, so a caller can still verify them.
func Load(fsys fs.FS, dir string) ([]*Lesson, error) {
	var problems []Problem
	add := func(err error) {
		var pe *ParseError
		if errors.As(err, &pe) {
			problems = append(problems, pe.Problems...)
		} else if err != nil {
			problems = append(problems, Problem{Path: dir, Msg: err.Error()})
		}
	}
	var folders []string
	if folderName.MatchString(path.Base(dir)) {
		folders = []string{dir}
	} else {
		entries, err := fs.ReadDir(fsys, dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.IsDir() && folderName.MatchString(e.Name()) {
				folders = append(folders, path.Join(dir, e.Name()))
			}
		}
	}
	sort.Strings(folders)
	var lessons []*Lesson
	for _, folder := range folders {
		entries, err := fs.ReadDir(fsys, folder)
		if err != nil {
			add(err)
			continue
		}
		present := map[string]bool{}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".md") {
				continue // pictures and other files a lesson may keep
			}
			if !isLanguage(strings.TrimSuffix(name, ".md")) {
				problems = append(problems, Problem{Path: path.Join(folder, name), Msg: fmt.Sprintf("a lesson file is named en.md or ja.md, not %s", name)})
				continue
			}
			present[strings.TrimSuffix(name, ".md")] = true
		}
		var langs []*Lesson
		ok := true
		for _, lang := range Languages {
			file := path.Join(folder, lang+".md")
			if !present[lang] {
				problems = append(problems, Problem{Path: file, Msg: fmt.Sprintf("missing: lesson %s has no %s.md (every lesson comes in %s)", path.Base(folder), lang, strings.Join(Languages, " and "))})
				ok = false
				continue
			}
			data, err := fs.ReadFile(fsys, file)
			if err != nil {
				add(err)
				ok = false
				continue
			}
			l, err := Parse(file, data)
			if err != nil {
				add(err)
				ok = false
				continue
			}
			langs = append(langs, l)
		}
		if !ok {
			continue
		}
		for _, other := range langs[1:] {
			if err := Compare(langs[0], other); err != nil {
				add(err)
				ok = false
			}
		}
		if ok {
			lessons = append(lessons, langs...)
		}
	}
	if len(problems) > 0 {
		return lessons, &ParseError{Problems: problems}
	}
	return lessons, nil
}

// Compare says whether b is a translation of a: the same setup and nodes,
// the same steps, and in each step the same run, solution and file blocks
// in the same order, the same checks and the same sources. Only prose may
// differ: the title, summary, text, hints and code examples. Each
// difference is a Problem at b's line, naming a's.
func Compare(a, b *Lesson) error {
	var problems []Problem
	diff := func(line int, format string, args ...any) {
		problems = append(problems, Problem{Path: b.Path, Line: line, Msg: fmt.Sprintf(format, args...)})
	}
	if a.Slug != b.Slug {
		diff(0, "lesson %q is compared with lesson %q (%s)", b.Slug, a.Slug, a.Path)
	}
	if a.Minutes != b.Minutes {
		diff(1, "minutes: %d here, %d in %s", b.Minutes, a.Minutes, a.Path)
	}
	if !reflect.DeepEqual(a.Setup, b.Setup) {
		diff(1, "setup differs from %s's: the languages must prepare the same cluster", a.Path)
	}
	if !reflect.DeepEqual(a.Nodes, b.Nodes) {
		diff(1, "nodes differ from %s's: the languages must run on the same nodes", a.Path)
	}
	for i := 0; i < max(len(a.Steps), len(b.Steps)); i++ {
		switch {
		case i >= len(b.Steps):
			sa := a.Steps[i]
			diff(0, "step %d %q (%s:%d) has no translation here: %d steps here, %d in %s", sa.N, sa.Title, a.Path, sa.Line, len(b.Steps), len(a.Steps), a.Path)
			continue
		case i >= len(a.Steps):
			sb := b.Steps[i]
			diff(sb.Line, "step %d %q is not in %s: %d steps here, %d there", sb.N, sb.Title, a.Path, len(b.Steps), len(a.Steps))
			continue
		}
		compareStep(a.Path, &a.Steps[i], &b.Steps[i], diff)
	}
	if len(problems) > 0 {
		return &ParseError{Problems: problems}
	}
	return nil
}

func compareStep(aPath string, sa, sb *Step, diff func(int, string, ...any)) {
	ba, bb := actions(sa), actions(sb)
	for j := 0; j < max(len(ba), len(bb)); j++ {
		switch {
		case j >= len(bb):
			diff(sb.Line, "step %d: the %s block at %s:%d is missing here", sb.N, describe(ba[j]), aPath, ba[j].Line)
		case j >= len(ba):
			diff(bb[j].Line, "step %d: this %s block is not in %s", sb.N, describe(bb[j]), aPath)
		case ba[j].Kind != bb[j].Kind || ba[j].File != bb[j].File:
			diff(bb[j].Line, "step %d: a %s block here, a %s block at %s:%d", sb.N, describe(bb[j]), describe(ba[j]), aPath, ba[j].Line)
		case !reflect.DeepEqual(ba[j].Lines, bb[j].Lines) || ba[j].Content != bb[j].Content:
			diff(bb[j].Line, "step %d: this %s block differs from %s:%d", sb.N, describe(bb[j]), aPath, ba[j].Line)
		}
	}
	for j := 0; j < max(len(sa.Checks), len(sb.Checks)); j++ {
		switch {
		case j >= len(sb.Checks):
			diff(sb.Line, "step %d: the check at %s:%d is missing here: %s", sb.N, aPath, sa.Checks[j].Line, sa.Checks[j])
		case j >= len(sa.Checks):
			diff(sb.Checks[j].Line, "step %d: this check is not in %s", sb.N, aPath)
		case !sameCheck(sa.Checks[j], sb.Checks[j]):
			diff(sb.Checks[j].Line, "step %d: this check differs from %s:%d (%s)", sb.N, aPath, sa.Checks[j].Line, sa.Checks[j])
		}
	}
	if !reflect.DeepEqual(sa.Sources, sb.Sources) {
		diff(sb.Line, "step %d: the sources differ from %s:%d's", sb.N, aPath, sa.Line)
	}
}

// actions are a step's blocks that do something: run, solution, file.
func actions(st *Step) []Block {
	var out []Block
	for _, b := range st.Blocks {
		switch b.Kind {
		case KindRun, KindSolution, KindFile:
			out = append(out, b)
		}
	}
	return out
}

func describe(b Block) string {
	if b.Kind == KindFile {
		return "file " + b.File
	}
	return b.Kind
}

func sameCheck(a, b Check) bool {
	return a.Command == b.Command && a.Op == b.Op && a.Want == b.Want
}
