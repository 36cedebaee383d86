package broker

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// headerRange matches the version range an api_NN_name.go file opens with:
// "// Produce (key 0), versions 3–9 ..." or "// OffsetDelete (key 47), version 0 ...".
var headerRange = regexp.MustCompile(`^// \w+ \(key (\d+)\), versions? (\d+)(?:–(\d+))?`)

// TestAPIHeadersMatchAdvertisedVersions checks that each API file's documented
// version range is the range the broker serves and ApiVersions advertises, and
// that every served API has its file.
func TestAPIHeadersMatchAdvertisedVersions(t *testing.T) {
	files, err := filepath.Glob("api_[0-9][0-9]_*.go")
	if err != nil {
		t.Fatal(err)
	}
	table := apiTable()
	documented := make(map[int16]bool)
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var m []string
		for _, line := range strings.SplitN(string(src), "\n", 8) {
			if m = headerRange.FindStringSubmatch(line); m != nil {
				break
			}
		}
		if m == nil {
			t.Errorf("%s: no \"// Name (key N), versions A–B\" header", f)
			continue
		}
		key := atoi16(t, m[1])
		lo := atoi16(t, m[2])
		hi := lo
		if m[3] != "" {
			hi = atoi16(t, m[3])
		}
		documented[key] = true
		a, ok := table[key]
		if !ok {
			t.Errorf("%s documents key %d, which apiTable does not serve", f, key)
			continue
		}
		if a.min != lo || a.max != hi {
			t.Errorf("%s documents versions %d–%d; the broker advertises %d–%d", f, lo, hi, a.min, a.max)
		}
	}
	for key := range table {
		if !documented[key] {
			t.Errorf("key %d is served but no api_NN_*.go file documents it", key)
		}
	}
}

func atoi16(t *testing.T, s string) int16 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 16)
	if err != nil {
		t.Fatal(err)
	}
	return int16(n)
}
