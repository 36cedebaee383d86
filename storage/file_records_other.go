//go:build !unix

package storage

import "os"

// dupFile opens f's file again by name: without dup, a segment deleted in between cannot be read.
func dupFile(f *os.File) (*os.File, error) { return os.Open(f.Name()) }
