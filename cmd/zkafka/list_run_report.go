package main

import (
	"fmt"
	"io"
)

// listRunReport is a tool of three subcommands, as `zkafka lab` and `zkafka chaos` are: list what
// it can do, run it, and report on a past run's directory again.
type listRunReport struct {
	name   string // after "zkafka "
	usage  string
	list   func(stdout io.Writer)
	run    func(args []string, stdout, stderr io.Writer) int
	report func(dir string, stdout, stderr io.Writer) int
}

// main dispatches args to the subcommand and returns the exit status.
func (t listRunReport) main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, t.usage)
		return 2
	}
	switch args[0] {
	case "list":
		t.list(stdout)
		return 0
	case "run":
		return t.run(args[1:], stdout, stderr)
	case "report":
		if len(args) != 2 {
			fmt.Fprint(stderr, t.usage)
			return 2
		}
		return t.report(args[1], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, t.usage)
		return 0
	}
	fmt.Fprintf(stderr, "zkafka %s: unknown command %q\n%s", t.name, args[0], t.usage)
	return 2
}
