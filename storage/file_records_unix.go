//go:build unix

package storage

import (
	"os"

	"golang.org/x/sys/unix"
)

// dupFile is a second descriptor of f's open file (close-on-exec, as Go opens files): it keeps the
// file readable after f is closed or its name removed.
func dupFile(f *os.File) (*os.File, error) {
	raw, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var fd int
	var dupErr error
	if err := raw.Control(func(s uintptr) { fd, dupErr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, err
	}
	if dupErr != nil {
		return nil, &os.PathError{Op: "dup", Path: f.Name(), Err: dupErr}
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}
