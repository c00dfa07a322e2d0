package site

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"testing/fstest"

	"github.com/kubetab/kubetab/core/lesson"
)

// The lesson player (site/src/lessons/) reads the course as JSON, parsed
// ahead of time by core/lesson so that the page and the verifier agree on
// every lesson:
//
//	lessons/index.json            {"lessons": [{"slug", "languages": {"en": {title, summary, minutes, steps}, "ja": ...}}]}
//	lessons/<slug>.<lang>.json    one lesson.Lesson
//
// site/build writes them into dist/ (so a static host serves the course),
// and `kubetab serve --lessons DIR` serves a folder's instead of the
// embedded ones (an author sees a lesson in the page as they write it).

// LessonIndex is lessons/index.json.
type LessonIndex struct {
	Lessons []IndexEntry `json:"lessons"`
}

// IndexEntry is one lesson in the index: its slug and, for each language,
// what the course index shows.
type IndexEntry struct {
	Slug      string                `json:"slug"`
	Languages map[string]LessonInfo `json:"languages"`
}

// LessonInfo is a lesson's line in the course index, in one language.
type LessonInfo struct {
	Title   string `json:"title"`
	Summary string `json:"summary"`
	Minutes int    `json:"minutes"`
	Steps   int    `json:"steps"`
}

// LessonFiles parses every lesson under dir in fsys (lesson.Load: both
// languages, which must agree) and returns the player's files by their path
// in the site ("lessons/index.json", "lessons/02-first-deployment.ja.json").
// A malformed lesson fails the whole course, with core/lesson's
// path:line: message lines.
func LessonFiles(fsys fs.FS, dir string) (map[string][]byte, error) {
	lessons, err := lesson.Load(fsys, dir)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	var index LessonIndex
	bySlug := map[string]int{}
	for _, l := range lessons {
		b, err := json.Marshal(l)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.Path, err)
		}
		files[path.Join("lessons", l.Slug+"."+l.Lang+".json")] = b
		i, ok := bySlug[l.Slug]
		if !ok {
			i = len(index.Lessons)
			bySlug[l.Slug] = i
			index.Lessons = append(index.Lessons, IndexEntry{Slug: l.Slug, Languages: map[string]LessonInfo{}})
		}
		index.Lessons[i].Languages[l.Lang] = LessonInfo{Title: l.Title, Summary: l.Summary, Minutes: l.Minutes, Steps: len(l.Steps)}
	}
	if index.Lessons == nil {
		index.Lessons = []IndexEntry{}
	}
	b, err := json.Marshal(index)
	if err != nil {
		return nil, err
	}
	files["lessons/index.json"] = b
	return files, nil
}

// WithLessons is fsys with its lessons/ replaced by files (LessonFiles).
func WithLessons(fsys fs.FS, files map[string][]byte) fs.FS {
	m := fstest.MapFS{}
	for name, data := range files {
		m[name] = &fstest.MapFile{Data: data, Mode: 0o444}
	}
	return lessonOverlay{base: fsys, lessons: m}
}

// WithFile serves fsys with one more file at the site's root (kubetab serve
// --kiosk adds kiosk.json).
func WithFile(fsys fs.FS, name string, data []byte) fs.FS {
	return fileOverlay{base: fsys, name: name, file: fstest.MapFS{name: {Data: data, Mode: 0o444}}}
}

type fileOverlay struct {
	base fs.FS
	name string
	file fstest.MapFS
}

func (o fileOverlay) Open(name string) (fs.File, error) {
	if name == o.name {
		return o.file.Open(name)
	}
	return o.base.Open(name)
}

type lessonOverlay struct {
	base    fs.FS
	lessons fstest.MapFS
}

func (o lessonOverlay) Open(name string) (fs.File, error) {
	switch {
	case name == "lessons" || strings.HasPrefix(name, "lessons/"):
		return o.lessons.Open(name)
	case name == "sw.js.br" || name == "sw.js.gz":
		// the copies of the base's sw.js, which names the base's lessons
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	case name == "sw.js":
		sw, err := fs.ReadFile(o.base, name)
		if err != nil {
			return nil, err
		}
		sw, err = o.serviceWorker(sw)
		if err != nil {
			return nil, err
		}
		return fstest.MapFS{name: {Data: sw, Mode: 0o444}}.Open(name)
	}
	return o.base.Open(name)
}

// serviceWorker rewrites the base's sw.js for these lessons: its files name
// them instead of the base's, and its version gains their hash, so a browser
// that cached the embedded course (or an author's earlier draft) installs
// this one instead of serving stale lessons from its cache.
func (o lessonOverlay) serviceWorker(sw []byte) ([]byte, error) {
	first, rest, _ := strings.Cut(string(sw), "\n")
	var build swBuild
	if !strings.HasPrefix(first, swBuildPrefix) {
		return nil, fmt.Errorf("sw.js: no build line")
	}
	js, _, _ := strings.Cut(strings.TrimPrefix(first, swBuildPrefix), "; //")
	if err := json.Unmarshal([]byte(js), &build); err != nil {
		return nil, fmt.Errorf("sw.js: build line: %w", err)
	}
	var files []string
	for _, f := range build.Files {
		if !strings.HasPrefix(f, "lessons/") {
			files = append(files, f)
		}
	}
	names := make([]string, 0, len(o.lessons))
	for name := range o.lessons {
		names = append(names, name)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, name := range names {
		fmt.Fprintf(h, "%s %d\n", name, len(o.lessons[name].Data))
		h.Write(o.lessons[name].Data)
	}
	build.Files = append(files, names...)
	sort.Strings(build.Files)
	build.Version += "-" + hex.EncodeToString(h.Sum(nil)[:6])
	line, err := build.line()
	if err != nil {
		return nil, err
	}
	return []byte(line + "\n" + rest), nil
}
