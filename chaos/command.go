package chaos

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// command runs name with args in dir (the current one when empty), with env (this process's when
// nil) and stdin (none when empty), and returns what it printed, stdout and stderr together. A
// failure's error starts with label and the arguments and ends with that output: cluster.sh's,
// docker's, compose's, ip's and nft's messages are the ones worth reading.
func command(ctx context.Context, dir string, env []string, stdin, label, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %w: %s", label, strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}

// execute runs a command (ip, nft, sysctl, mount, nsenter), with stdin when it is not empty.
func execute(stdin string, name string, args ...string) error {
	_, err := command(context.Background(), "", nil, stdin, name, name, args...)
	return err
}
