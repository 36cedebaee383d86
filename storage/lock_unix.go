//go:build unix

package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockFileName is the file Kafka locks in each log directory so that two brokers never share one.
const lockFileName = ".lock"

// lockDir takes an exclusive, non-blocking flock on dir/.lock.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockFileName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("log directory %s is in use by another process: %w", dir, err)
	}
	return f, nil
}

// unlockDir releases the lock; closing the file drops the flock.
func unlockDir(f *os.File) error { return f.Close() }
