package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// diskFull gives one broker a log dir of its own size: a tmpfs of size bytes mounted over
// $DATA/broker-N for the run, holding a copy of what was there. A fault fills it with a balloon file
// and removes the balloon again; leaving copies the logs back to the real disk.
type diskFull struct {
	l       *Local
	h       *History
	size    int64
	broker  int32  // the broker whose log dir it is
	saved   string // where its log dir was moved aside, "" when not
	mounted bool
	balloon string
}

func newDiskFull(l *Local, h *History, size int64) *diskFull {
	return &diskFull{l: l, h: h, size: size}
}

// balloonName is hidden from the log loader, which only reads directories anyway.
const balloonName = ".zkafka-chaos-balloon"

// enter stops broker b (a controlled shutdown), mounts the tmpfs over its log dir with a copy of its
// logs, and starts it again.
func (d *diskFull) enter(ctx context.Context, b int32) error {
	dir := d.l.LogDir(b)
	saved := dir + ".chaos-saved"
	if _, err := os.Stat(saved); err == nil {
		return fmt.Errorf("%s exists: a run that ended midway left it; move it back over %s (unmounting any tmpfs there) first", saved, dir)
	}
	d.h.Add(Op{Type: OpNote, Broker: b, Note: fmt.Sprintf("mounting a %d MiB tmpfs over broker %d's log dir", d.size>>20, b)})
	d.broker = b
	if err := d.l.Stop(ctx, b); err != nil {
		return err
	}
	if err := os.Rename(dir, saved); err != nil {
		return err
	}
	d.saved = saved
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	if err := execute("", "mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", d.size), "tmpfs", dir); err != nil {
		return err
	}
	d.mounted = true
	if err := execute("", "cp", "-a", saved+"/.", dir+"/"); err != nil {
		return err
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return err
	}
	if used := int64(st.Blocks-st.Bfree) * st.Bsize; used > d.size/2 {
		return fmt.Errorf("broker %d's logs take %d MiB of the %d MiB tmpfs: give a larger --disk-size", b, used>>20, d.size>>20)
	}
	return d.l.Start(ctx, b)
}

// fill takes every free byte of the tmpfs.
func (d *diskFull) fill() error {
	dir := d.l.LogDir(d.broker)
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return err
	}
	d.balloon = filepath.Join(dir, balloonName)
	f, err := os.OpenFile(d.balloon, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	free := int64(st.Bavail) * st.Bsize
	// The broker may take a few pages meanwhile: give back what cannot be had.
	for free > 0 {
		err := syscall.Fallocate(int(f.Fd()), 0, 0, free)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.ENOSPC) {
			return fmt.Errorf("fill %s: %w", dir, err)
		}
		free -= 1 << 16
	}
	return nil
}

// free removes the balloon.
func (d *diskFull) free() error {
	if d.balloon == "" {
		return nil
	}
	if err := os.Remove(d.balloon); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	d.balloon = ""
	return nil
}

// leave stops the broker, copies its logs from the tmpfs back to the real disk, unmounts the tmpfs
// and starts the broker again.
func (d *diskFull) leave(ctx context.Context) error {
	if d.saved == "" {
		return nil
	}
	b, dir := d.broker, d.l.LogDir(d.broker)
	if !d.mounted {
		// The mount failed: put the logs back as they were.
		if err := errors.Join(os.Remove(dir), os.Rename(d.saved, dir)); err != nil {
			return err
		}
		d.saved = ""
		return d.l.Start(ctx, b)
	}
	d.h.Add(Op{Type: OpNote, Broker: b, Note: fmt.Sprintf("copying broker %d's logs back from the tmpfs", b)})
	if err := d.free(); err != nil {
		return err
	}
	if err := d.l.Stop(ctx, b); err != nil {
		return err
	}
	fresh := dir + ".chaos-new"
	if err := os.RemoveAll(fresh); err != nil {
		return err
	}
	if err := os.Mkdir(fresh, 0o755); err != nil {
		return err
	}
	if err := execute("", "cp", "-a", dir+"/.", fresh+"/"); err != nil {
		return err
	}
	if err := umount(dir); err != nil {
		return err
	}
	if err := os.Remove(dir); err != nil {
		return err
	}
	if err := os.Rename(fresh, dir); err != nil {
		return err
	}
	if err := os.RemoveAll(d.saved); err != nil {
		return err
	}
	d.saved, d.mounted = "", false
	return d.l.Start(ctx, b)
}

// umount unmounts dir, retrying while a process that just exited still holds it.
func umount(dir string) error {
	var err error
	for range 50 {
		if err = exec.Command("umount", dir).Run(); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("umount %s: %w", dir, err)
}
