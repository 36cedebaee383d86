package tutorial

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The tutorial's tested blocks are fenced as ```sh tutorial (run once),
// ```sh tutorial-wait (each command retried until its output matches, for
// what takes a session timeout to happen) or ```sh tutorial-background (left
// running, like a second terminal, until the comment stopBackground). In a
// block, "$ cmd" lines are commands and the lines after one are output it
// must show, in order, among its lines (whitespace runs count as one space).
// <name> in output matches a word and remembers it; later, <name> in a
// command or output is that word and <name+1> that number plus one.
const stopBackground = "<!-- tutorial: stop background -->"

type step struct {
	kind    string // "tutorial", "tutorial-wait", "tutorial-background" or "stop"
	line    int    // in docs/TUTORIAL.md
	command string
	want    []string
}

func parseTutorial(t *testing.T, path string) []step {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var steps []step
	kind := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case kind == "" && strings.HasPrefix(line, "```sh tutorial"):
			kind = strings.TrimSpace(strings.TrimPrefix(line, "```sh "))
		case kind == "" && strings.TrimSpace(line) == stopBackground:
			steps = append(steps, step{kind: "stop", line: n})
		case kind == "":
		case strings.HasPrefix(line, "```"):
			kind = ""
		case strings.HasPrefix(line, "$ "):
			steps = append(steps, step{kind: kind, line: n, command: strings.TrimPrefix(line, "$ ")})
		case strings.HasPrefix(line, "# ") || strings.TrimSpace(line) == "":
		case len(steps) == 0 || steps[len(steps)-1].kind != kind:
			t.Fatalf("%s:%d: output before any command", path, n)
		default:
			steps[len(steps)-1].want = append(steps[len(steps)-1].want, line)
		}
	}
	if kind != "" {
		t.Fatalf("%s: a tutorial block is not closed", path)
	}
	return steps
}

// tutorialRun holds what one run of the tutorial has learnt and started.
type tutorialRun struct {
	t          *testing.T
	s          *sandbox
	ports      *strings.Replacer
	bound      map[string]string
	background []*background
}

type background struct {
	step step
	cmd  *exec.Cmd
	out  *bytes.Buffer
	done chan struct{}
}

func TestTutorial(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	steps := parseTutorial(t, filepath.Join(filepath.Dir(file), "..", "..", "docs", "TUTORIAL.md"))
	if len(steps) < 20 {
		t.Fatalf("only %d tested commands in docs/TUTORIAL.md", len(steps))
	}
	s := newSandbox(t)
	r := &tutorialRun{t: t, s: s, bound: map[string]string{}}
	// The tutorial's ports become the sandbox's.
	var pairs []string
	for i, p := range []int{9092, 9093, 9094} {
		pairs = append(pairs, strconv.Itoa(p), strconv.Itoa(s.basePort+i))
	}
	r.ports = strings.NewReplacer(append(pairs, "2181", strconv.Itoa(s.zkPort))...)
	t.Cleanup(r.stopBackground)

	for _, st := range steps {
		switch st.kind {
		case "stop":
			r.stopBackground()
		case "tutorial-background":
			r.startBackground(st)
		case "tutorial":
			if out, err := r.runOnce(st); err != nil {
				t.Fatalf("TUTORIAL.md:%d: %s\n%v\noutput:\n%s", st.line, st.command, err, out)
			}
		case "tutorial-wait":
			deadline := time.Now().Add(90 * time.Second)
			for {
				out, err := r.runOnce(st)
				if err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("TUTORIAL.md:%d: %s\nstill failing after 90s: %v\noutput:\n%s", st.line, st.command, err, out)
				}
				time.Sleep(time.Second)
			}
		}
	}
}

// command is the step's command line with the sandbox's ports and the
// values remembered so far.
func (r *tutorialRun) command(st step) string {
	r.t.Helper()
	cmd, err := r.substitute(r.ports.Replace(st.command))
	if err != nil {
		r.t.Fatalf("TUTORIAL.md:%d: %v", st.line, err)
	}
	return cmd
}

func (r *tutorialRun) runOnce(st step) (string, error) {
	out, err := r.s.run(2*time.Minute, r.command(st))
	if err != nil {
		return out, err
	}
	return out, r.match(st, out)
}

// zkCliPreamble are the lines zkCli.sh prints while connecting, before the
// answer; the tutorial says so once and does not show them.
var zkCliPreamble = regexp.MustCompile(`^(Connecting to \S+|WATCHER::|WatchedEvent state:SyncConnected type:None path:null)$`)

var placeholder = regexp.MustCompile(`<([a-z][a-z0-9-]*)(\+1)?>`)

// substitute replaces bound placeholders; an unbound one is an error.
func (r *tutorialRun) substitute(s string) (string, error) {
	var err error
	out := placeholder.ReplaceAllStringFunc(s, func(m string) string {
		v, e := r.value(placeholder.FindStringSubmatch(m))
		if e != nil && err == nil {
			err = e
		}
		return v
	})
	return out, err
}

func (r *tutorialRun) value(m []string) (string, error) {
	v, ok := r.bound[m[1]]
	if !ok {
		return "", fmt.Errorf("<%s> is used before any output showed it", m[1])
	}
	if m[2] == "" {
		return v, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return "", fmt.Errorf("<%s+1>: %q is not a number", m[1], v)
	}
	return strconv.Itoa(n + 1), nil
}

// match checks that the wanted lines appear in order among out's lines,
// binding new placeholders only when the whole step matches.
func (r *tutorialRun) match(st step, out string) error {
	var lines []string
	for _, line := range strings.Split(out, "\n") {
		line = strings.Join(strings.Fields(line), " ")
		if !zkCliPreamble.MatchString(line) {
			lines = append(lines, line)
		}
	}
	learnt := map[string]string{}
	next := 0
	for _, w := range st.want {
		re, names, err := r.lineRegexp(strings.Join(strings.Fields(r.ports.Replace(w)), " "), learnt)
		if err != nil {
			return err
		}
		found := false
		for ; next < len(lines) && !found; next++ {
			m := re.FindStringSubmatch(lines[next])
			if m == nil {
				continue
			}
			found = true
			for i, name := range names {
				learnt[name] = m[i+1]
			}
		}
		if !found {
			return fmt.Errorf("no line matching %q (in order)", w)
		}
	}
	for k, v := range learnt {
		r.bound[k] = v
	}
	return nil
}

// lineRegexp turns one wanted line into an anchored regexp; names are the
// placeholders it captures.
func (r *tutorialRun) lineRegexp(w string, learnt map[string]string) (*regexp.Regexp, []string, error) {
	var b strings.Builder
	var names []string
	b.WriteString("^")
	last := 0
	for _, loc := range placeholder.FindAllStringSubmatchIndex(w, -1) {
		b.WriteString(regexp.QuoteMeta(w[last:loc[0]]))
		last = loc[1]
		name := w[loc[2]:loc[3]]
		_, isBound := r.bound[name]
		_, isLearnt := learnt[name]
		switch {
		case isLearnt:
			b.WriteString(regexp.QuoteMeta(learnt[name]))
		case isBound || loc[4] >= 0:
			v, err := r.value(placeholder.FindStringSubmatch(w[loc[0]:loc[1]]))
			if err != nil {
				return nil, nil, err
			}
			b.WriteString(regexp.QuoteMeta(v))
		default:
			b.WriteString(`(\S+?)`)
			names = append(names, name)
		}
	}
	b.WriteString(regexp.QuoteMeta(w[last:]))
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	return re, names, err
}

func (r *tutorialRun) startBackground(st step) {
	r.t.Helper()
	cmd := exec.Command("bash", "-c", r.command(st))
	cmd.Dir, cmd.Env = r.s.root, r.s.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	bg := &background{step: st, cmd: cmd, out: &bytes.Buffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = bg.out, bg.out
	if err := cmd.Start(); err != nil {
		r.t.Fatalf("TUTORIAL.md:%d: %v", st.line, err)
	}
	go func() { cmd.Wait(); close(bg.done) }()
	r.background = append(r.background, bg)
}

// stopBackground is the reader's Ctrl-C in the other terminals: SIGINT to
// each background command's process group; then its output is checked.
func (r *tutorialRun) stopBackground() {
	for _, bg := range r.background {
		syscall.Kill(-bg.cmd.Process.Pid, syscall.SIGINT)
		select {
		case <-bg.done:
		case <-time.After(30 * time.Second):
			syscall.Kill(-bg.cmd.Process.Pid, syscall.SIGKILL)
			<-bg.done
			r.t.Errorf("TUTORIAL.md:%d: %s ignored Ctrl-C for 30s", bg.step.line, bg.step.command)
			continue
		}
		if err := r.match(bg.step, bg.out.String()); err != nil {
			r.t.Errorf("TUTORIAL.md:%d: %s: %v\noutput:\n%s", bg.step.line, bg.step.command, err, bg.out)
		}
	}
	r.background = nil
}
