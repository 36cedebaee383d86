//go:build !unix

package storage

import (
	"os"
	"path/filepath"
)

const lockFileName = ".lock"

// lockDir only creates dir/.lock where flock is unavailable; the directory is not protected.
func lockDir(dir string) (*os.File, error) {
	return os.OpenFile(filepath.Join(dir, lockFileName), os.O_RDWR|os.O_CREATE, 0o644)
}

func unlockDir(f *os.File) error { return f.Close() }
