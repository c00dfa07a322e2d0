package site

import (
	"encoding/json"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
)

func lessonFS(en, ja string) fstest.MapFS {
	return fstest.MapFS{
		"README.md":           {Data: []byte("# the course\n")},
		"01-first/en.md":      {Data: []byte(en)},
		"01-first/ja.md":      {Data: []byte(ja)},
		"02-second/en.md":     {Data: []byte(strings.Replace(en, "title: First", "title: Second", 1))},
		"02-second/ja.md":     {Data: []byte(ja)},
		"02-second/notes.txt": {Data: []byte("not a lesson")},
	}
}

const (
	enLesson = "---\ntitle: First\nsummary: One step.\nminutes: 3\n---\n\n## Make it\n\n```run\nkubectl create ns a\n```\n\n```check\nkubectl get ns a\n```\n"
	jaLesson = "---\ntitle: 最初\nsummary: 1 ステップ。\nminutes: 3\n---\n\n## 作る\n\n```run\nkubectl create ns a\n```\n\n```check\nkubectl get ns a\n```\n"
)

func TestLessonFiles(t *testing.T) {
	files, err := LessonFiles(lessonFS(enLesson, jaLesson), ".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range files {
		names = append(names, n)
	}
	if len(files) != 5 {
		t.Fatalf("files = %v, want the index and 4 lessons", names)
	}
	var index LessonIndex
	if err := json.Unmarshal(files["lessons/index.json"], &index); err != nil {
		t.Fatal(err)
	}
	if len(index.Lessons) != 2 || index.Lessons[0].Slug != "01-first" || index.Lessons[1].Slug != "02-second" {
		t.Fatalf("index = %+v", index)
	}
	want := LessonInfo{Title: "最初", Summary: "1 ステップ。", Minutes: 3, Steps: 1}
	if got := index.Lessons[0].Languages["ja"]; got != want {
		t.Errorf("01-first ja = %+v, want %+v", got, want)
	}
	if got := index.Lessons[1].Languages["en"].Title; got != "Second" {
		t.Errorf("02-second en title = %q", got)
	}
	var l struct {
		Slug, Lang string
		Steps      []struct{ Title string }
	}
	if err := json.Unmarshal(files["lessons/01-first.ja.json"], &l); err != nil {
		t.Fatal(err)
	}
	if l.Slug != "01-first" || l.Lang != "ja" || len(l.Steps) != 1 || l.Steps[0].Title != "作る" {
		t.Errorf("01-first.ja.json = %+v", l)
	}

	// Served over the built site: lessons/ from the files, the rest as it was.
	h := Handler(WithLessons(builtFS(), files))
	if res := get(t, h, "/lessons/01-first.en.json"); res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" {
		t.Errorf("lessons/01-first.en.json: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if res := get(t, h, "/lessons/03-missing.en.json"); res.StatusCode != 404 {
		t.Errorf("a missing lesson: %d", res.StatusCode)
	}
	if res := get(t, h, "/index.html"); res.StatusCode != 200 {
		t.Errorf("index.html through the overlay: %d", res.StatusCode)
	}
	if _, err := fs.Stat(WithLessons(builtFS(), files), "lessons/index.json"); err != nil {
		t.Error(err)
	}
}

func TestLessonFilesRefusesMalformed(t *testing.T) {
	tests := []struct {
		name, en, want string
	}{
		{"unknown block", strings.Replace(enLesson, "```check", "```chek", 1), "01-first/en.md:13: "},
		{"no title", strings.Replace(enLesson, "title: First\n", "", 1), "01-first/en.md:"},
		{"steps differ", strings.Replace(enLesson, "kubectl get ns a", "kubectl get ns b", 1), "01-first/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, err := LessonFiles(lessonFS(tt.en, jaLesson), ".")
			if err == nil {
				t.Fatalf("no error; files %d", len(files))
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not name %q", err, tt.want)
			}
		})
	}
}
