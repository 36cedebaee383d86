package broker

import (
	"fmt"
	"io"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// sendFile writes n bytes of f from pos to c with sendfile(2): from the page cache to the socket, never
// through this process's memory (Kafka's FileRecords.writeTo). The offset is passed explicitly, so
// concurrent fetches of one segment do not share the file's position. A file shorter than pos+n (a
// truncation since the records were found) is an error: the frame's size is already on the wire, so the
// caller closes the connection.
func sendFile(c net.Conn, f *os.File, pos int64, n int) error {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return copyFile(c, f, pos, n)
	}
	sock, err := tc.SyscallConn()
	if err != nil {
		return err
	}
	file, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var sendErr error
	ctlErr := file.Control(func(in uintptr) {
		err := sock.Write(func(out uintptr) bool {
			for n > 0 {
				m, err := unix.Sendfile(int(out), int(in), &pos, n)
				n -= max(m, 0)
				switch {
				case err == syscall.EAGAIN:
					return false // wait until the socket can take more
				case err == syscall.EINTR:
				case err != nil:
					sendErr = os.NewSyscallError("sendfile", err)
					return true
				case m == 0:
					sendErr = fmt.Errorf("sendfile %s: %w", f.Name(), io.ErrUnexpectedEOF)
					return true
				}
			}
			return true
		})
		if sendErr == nil {
			sendErr = err
		}
	})
	if ctlErr != nil {
		return ctlErr
	}
	return sendErr
}
