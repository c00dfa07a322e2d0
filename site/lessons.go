package site

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
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

type lessonOverlay struct {
	base    fs.FS
	lessons fstest.MapFS
}

func (o lessonOverlay) Open(name string) (fs.File, error) {
	if name == "lessons" || strings.HasPrefix(name, "lessons/") {
		return o.lessons.Open(name)
	}
	return o.base.Open(name)
}
