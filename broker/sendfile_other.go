//go:build !linux

package broker

import (
	"net"
	"os"
)

// sendFile writes n bytes of f from pos to c; without Linux's sendfile(2), through a buffer.
func sendFile(c net.Conn, f *os.File, pos int64, n int) error { return copyFile(c, f, pos, n) }
