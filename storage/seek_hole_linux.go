package storage

import "golang.org/x/sys/unix"

// seekHole is lseek's SEEK_HOLE: the offset of the first hole at or after the given one.
const seekHole = unix.SEEK_HOLE
