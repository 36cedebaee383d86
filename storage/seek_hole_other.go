//go:build !linux

package storage

// seekHole is a whence no Seek accepts where holes are not asked for: index files are read whole.
const seekHole = -1
