package tutorial

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestREADMEPackageMap keeps README's package table in step with the tree:
// every folder holding Go code has a row, and every row names a folder.
func TestREADMEPackageMap(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	repo := filepath.Join(filepath.Dir(file), "..", "..")
	readme, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme)
	start := strings.Index(section, "\n## Packages\n")
	if start < 0 {
		t.Fatal("README has no \"## Packages\" section")
	}
	section = section[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	rows := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllStringSubmatch(section, -1) {
		rows[m[1]] = true
	}

	var code []string
	err = filepath.WalkDir(repo, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repo, path)
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && rel != "." || rel == "data" || rel == "bin" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			dir := filepath.ToSlash(filepath.Dir(rel))
			if !slices.Contains(code, dir) {
				code = append(code, dir)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range code {
		if !rows[dir] {
			t.Errorf("README's package table has no row for %s", dir)
		}
		delete(rows, dir)
	}
	// The rest may name folders of scripts or images, which must exist.
	for dir := range rows {
		if info, err := os.Stat(filepath.Join(repo, dir)); err != nil || !info.IsDir() {
			t.Errorf("README's package table lists %s, which is not a folder", dir)
		}
	}
}
