package tutorial

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The tutorial's tested blocks are fenced as ```sh tutorial (run once),
// ```sh tutorial-wait (each command retried until its output matches, for
// what takes a session timeout to happen) or ```sh tutorial-background (left
// running, like a second terminal, until the comment stopBackground);
// ```sh tutorial-docker and ```sh tutorial-docker-wait are the same for the
// "With Docker" section, which TestTutorialDocker runs on its own. doc.go
// says how a command's output is compared with the lines under it.
const stopBackground = "<!-- tutorial: stop background -->"

type step struct {
	kind    string // "tutorial", "tutorial-wait", "tutorial-background", "stop" or "tutorial-docker[-wait]"
	line    int    // in the doc
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

// tutorialRun holds what one run of a tested doc has learnt and started.
type tutorialRun struct {
	t          *testing.T
	doc        string // the doc's file name, for messages
	s          *sandbox
	ports      *strings.Replacer // the doc's ports to the sandbox's, in commands and doc lines
	reader     readerView
	bound      map[string]string
	background []*background
}

// readerView turns what the test's setup prints into what a reader sees,
// each way narrowly: ports aside, the only differences between the doc and
// the test's runs.
type readerView struct {
	replace    *strings.Replacer // text the setup prints, to the reader's
	notPrinted []string          // doc lines that the setup does not print
}

type background struct {
	step step
	cmd  *exec.Cmd
	out  *bytes.Buffer
	done chan struct{}
}

func TestTutorial(t *testing.T) { playDoc(t, "TUTORIAL.md", 20) }

// docPath is the path of a doc under docs/.
func docPath(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "docs", name)
}

// playDoc runs the tested blocks of docs/<name>, which has at least
// minSteps commands, in a fresh sandbox, as a reader of it would.
func playDoc(t *testing.T, name string, minSteps int) {
	steps := parseTutorial(t, docPath(name))
	if len(steps) < minSteps {
		t.Fatalf("only %d tested commands in docs/%s", len(steps), name)
	}
	s := newSandbox(t)
	r := &tutorialRun{t: t, doc: name, s: s, bound: map[string]string{}}
	// The tutorial's ports become the sandbox's.
	var pairs []string
	for i, p := range []int{9092, 9093, 9094} {
		pairs = append(pairs, strconv.Itoa(p), strconv.Itoa(s.basePort+i))
	}
	r.ports = strings.NewReplacer(append(pairs, "2181", strconv.Itoa(s.zkPort))...)
	// What cluster.sh up's hints add for the sandbox's settings (see
	// cluster_env there), as printf %q prints them.
	r.reader.replace = strings.NewReplacer(fmt.Sprintf("ZKAFKA_BASE_PORT=%d ZKAFKA_ZK_PORT=%d ZKAFKA_BIN=%s ",
		s.basePort, s.zkPort, filepath.Join(s.root, "bin", "zkafka")), "")
	// With ZKAFKA_BIN, cluster.sh up runs the test's build instead of
	// building bin/zkafka.
	r.reader.notPrinted = []string{"building bin/zkafka"}
	t.Cleanup(r.stopBackground)
	r.play(steps)
}

// play runs the steps in order; the Docker ones are left to
// TestTutorialDocker.
func (r *tutorialRun) play(steps []step) {
	t := r.t
	for _, st := range steps {
		switch st.kind {
		case "stop":
			r.stopBackground()
		case "tutorial-background":
			r.startBackground(st)
		case "tutorial":
			if out, err := r.runOnce(st); err != nil {
				t.Fatalf("%s:%d: %s\n%v\noutput:\n%s", r.doc, st.line, st.command, err, out)
			}
		case "tutorial-wait":
			deadline := time.Now().Add(90 * time.Second)
			for {
				out, err := r.runOnce(st)
				if err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s:%d: %s\nstill failing after 90s: %v\noutput:\n%s", r.doc, st.line, st.command, err, out)
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
		r.t.Fatalf("%s:%d: %v", r.doc, st.line, err)
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

// zkCliChatter are the lines zkCli.sh prints around its answer: while
// connecting (the WATCHER block from an event thread, so anywhere), and, with
// the container's logging, as it exits (ZooKeeper 3.8.0 logs a normal exit
// as an ERROR). The tutorial says so and does not show them.
var zkCliChatter = regexp.MustCompile(`^(Connecting to \S+|WATCHER::|WatchedEvent state:(SyncConnected|SaslAuthenticated) type:None path:null|` +
	`\S+ \S+ \[myid:\] - ERROR \[main:ServiceUtils@\d+\] - Exiting JVM with code 0)$`)

// zkCliEventInLine is zkCli's event line written into another line.
var zkCliEventInLine = regexp.MustCompile(`\nWatchedEvent state:(SyncConnected|SaslAuthenticated) type:None path:null\n`)

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

// match checks out, the whole output of st's command, against the lines the
// doc shows, with the tolerances doc.go lists and no others. New
// placeholders are bound only when the whole output matches.
func (r *tutorialRun) match(st step, out string) error {
	m := &outputMatch{r: r, worst: mismatch{doc: -1}}
	for _, w := range st.want {
		w = strings.Join(strings.Fields(r.ports.Replace(w)), " ")
		if !slices.Contains(r.reader.notPrinted, w) {
			m.doc = append(m.doc, w)
		}
	}
	if r.reader.replace != nil {
		out = r.reader.replace.Replace(out)
	}
	// zkCli's event thread may print its WatchedEvent line in the middle of the answer's line;
	// the second reading takes it out with its newlines, joining the answer again.
	for _, o := range []string{out, zkCliEventInLine.ReplaceAllString(out, "")} {
		m.out = nil
		for _, line := range strings.Split(o, "\n") {
			line = strings.Join(strings.Fields(line), " ")
			if line != "" && !zkCliChatter.MatchString(line) {
				m.out = append(m.out, line)
			}
		}
		learnt, err := m.from(0, 0, map[string]string{})
		if err != nil {
			return err
		}
		if learnt != nil {
			maps.Copy(r.bound, learnt)
			return nil
		}
	}
	return m.worst.err(m)
}

// isElision reports whether a doc line is the marker for elided lines: "..."
// alone or followed by words that say what the lines are.
func isElision(docLine string) bool {
	return docLine == "..." || strings.HasPrefix(docLine, "... ")
}

// outputMatch aligns the doc's lines with the output's, both normalised.
type outputMatch struct {
	r     *tutorialRun
	doc   []string
	out   []string
	worst mismatch // the failure furthest into the doc, to report
}

// mismatch is where an alignment failed: doc line doc against output line
// out (either may be past the end); afterElision when the lines elided
// before doc could not be ended anywhere.
type mismatch struct {
	doc, out     int
	afterElision bool
}

func (m *outputMatch) fail(f mismatch) {
	if f.doc > m.worst.doc || f.doc == m.worst.doc && f.out > m.worst.out {
		m.worst = f
	}
}

func (f mismatch) err(m *outputMatch) error {
	switch {
	case f.afterElision:
		return fmt.Errorf("the doc's %q is never followed by %q", m.doc[f.doc-1], m.doc[f.doc])
	case f.doc == len(m.doc):
		return fmt.Errorf("output line %d %q is not in the doc", f.out+1, m.out[f.out])
	case f.out == len(m.out):
		return fmt.Errorf("the output ends where the doc shows %q", m.doc[f.doc])
	default:
		return fmt.Errorf("output line %d %q is not %q", f.out+1, m.out[f.out], m.doc[f.doc])
	}
}

// from matches doc lines i.. against output lines j.., returning the
// placeholders learnt on success and nil on a mismatch. An elision takes
// as few lines as lets the rest match.
func (m *outputMatch) from(i, j int, learnt map[string]string) (map[string]string, error) {
	switch {
	case i == len(m.doc) && j == len(m.out):
		return learnt, nil
	case i == len(m.doc) || j == len(m.out):
		m.fail(mismatch{doc: i, out: j})
		return nil, nil
	case isElision(m.doc[i]):
		if i+1 == len(m.doc) {
			return learnt, nil // the rest of the output, at least one line
		}
		for k := j + 1; k <= len(m.out); k++ {
			if res, err := m.from(i+1, k, learnt); res != nil || err != nil {
				return res, err
			}
		}
		if m.worst.doc <= i+1 {
			m.worst = mismatch{doc: i + 1, out: len(m.out), afterElision: true}
		}
		return nil, nil
	}
	re, names, err := m.r.lineRegexp(m.doc[i], learnt)
	if err != nil {
		return nil, err
	}
	sub := re.FindStringSubmatch(m.out[j])
	if sub == nil {
		m.fail(mismatch{doc: i, out: j})
		return nil, nil
	}
	if len(names) > 0 {
		learnt = maps.Clone(learnt)
		for k, name := range names {
			learnt[name] = sub[k+1]
		}
	}
	return m.from(i+1, j+1, learnt)
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
		r.t.Fatalf("%s:%d: %v", r.doc, st.line, err)
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
			r.t.Errorf("%s:%d: %s ignored Ctrl-C for 30s", r.doc, bg.step.line, bg.step.command)
			continue
		}
		if err := r.match(bg.step, bg.out.String()); err != nil {
			r.t.Errorf("%s:%d: %s: %v\noutput:\n%s", r.doc, bg.step.line, bg.step.command, err, bg.out)
		}
	}
	r.background = nil
}
