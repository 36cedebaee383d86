package ui

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"ts": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		if y, m, d := t.Date(); y == time.Now().Year() && m == time.Now().Month() && d == time.Now().Day() {
			return t.Format("15:04:05.000")
		}
		return t.Format("2006-01-02 15:04:05")
	},
	"hex": func(v int64) string { return "0x" + strconv.FormatInt(v, 16) },
	"ids": ids,
	"class": func(s string) string {
		return strings.ReplaceAll(s, " ", "-")
	},
}).ParseFS(templateFS, "templates/*.html"))

// Server serves the dashboard: the page, its live updates as Server-Sent
// Events, the explorer's znodes and, when allowed, the actions.
type Server struct {
	m       *Model
	actions *Actions // nil: every action request is answered 403
	boot    string   // tells a page that reconnects whether this is the server it loaded from
	log     *zap.Logger

	cacheMu sync.Mutex
	cache   map[string]rendered
	rows    map[uint64]renderedRow // timeline rows by sequence number
}

type rendered struct {
	rev  uint64
	html []byte
}

// renderedRow is a timeline row as rendered on a day: ts shows the date only
// for events of another day.
type renderedRow struct {
	day  string
	html []byte
}

// NewServer returns the dashboard's HTTP server for a model; actions is nil
// unless --allow-actions was given.
func NewServer(m *Model, actions *Actions) *Server {
	s := &Server{m: m, actions: actions, boot: strconv.FormatInt(time.Now().UnixNano(), 36), log: m.log, cache: map[string]rendered{}, rows: map[uint64]renderedRow{}}
	if actions != nil {
		actions.touch = func() { m.touch(sectionActions) }
	}
	return s
}

// Handler routes the dashboard's requests. Only the actions accept
// anything but GET.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(staticFS, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /events", s.events)
	mux.HandleFunc("GET /znode", s.znodeFragment)
	mux.HandleFunc("/actions/", func(w http.ResponseWriter, r *http.Request) {
		if s.actions == nil {
			http.Error(w, "actions are off: start zkafka ui with --allow-actions against a local cluster.sh cluster", http.StatusForbidden)
			return
		}
		s.actions.ServeHTTP(w, r)
	})
	return securityHeaders(mux)
}

// securityHeaders forbids every script but the page's own and framing.
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; frame-ancestors 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		h.ServeHTTP(w, r)
	})
}

type sectionHTML struct {
	ID   string
	HTML template.HTML
}

type pageData struct {
	Boot          string
	Rev, Seq      uint64
	Actions       bool
	Status        statusView
	Cluster       clusterView
	Topics        topicsView
	TopicSections []sectionHTML
	Groups        groupsView
	Znode         znodeView
	Kinds         []string
	Events        []Event // newest first
	ActionsHTML   template.HTML
}

// pageEvents is how many timeline events the page starts with.
const pageEvents = 1000

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	d := pageData{Boot: s.boot, Actions: s.actions != nil, Kinds: Kinds}
	s.m.mu.RLock()
	d.Rev, d.Seq = s.m.rev, s.m.timeline.seq
	d.Status, d.Cluster, d.Topics, d.Groups = s.m.statusLocked(), s.m.clusterLocked(), s.m.topicsLocked(), s.m.groupsLocked()
	topics := s.m.topicNamesLocked()
	evs := s.m.timeline.events
	if len(evs) > pageEvents {
		evs = evs[len(evs)-pageEvents:]
	}
	for i := len(evs) - 1; i >= 0; i-- {
		d.Events = append(d.Events, evs[i])
	}
	brokers := brokerIDs(d.Cluster)
	s.m.mu.RUnlock()
	d.Znode = s.m.znode("/")
	for _, t := range topics {
		id := topicSection(t)
		html, exists, err := s.render(id)
		if err != nil {
			s.fail(w, err)
			return
		}
		if exists {
			d.TopicSections = append(d.TopicSections, sectionHTML{ID: id, HTML: template.HTML(html)})
		}
	}
	actions, err := s.execute("actions", s.actions.view(brokers))
	if err != nil {
		s.fail(w, err)
		return
	}
	d.ActionsHTML = template.HTML(actions)
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, "page", d); err != nil {
		s.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b.Bytes())
}

func brokerIDs(c clusterView) []int32 {
	var out []int32
	for _, b := range c.Brokers {
		out = append(out, b.ID)
	}
	return out
}

func (s *Server) fail(w http.ResponseWriter, err error) {
	s.log.Error("rendering the dashboard failed", zap.Error(err))
	http.Error(w, "rendering failed: "+err.Error(), http.StatusInternalServerError)
}

func (s *Server) execute(name string, data any) ([]byte, error) {
	var b bytes.Buffer
	err := templates.ExecuteTemplate(&b, name, data)
	return b.Bytes(), err
}

// render returns a section's HTML at the model's current state; ok is false
// for a section that no longer exists (a deleted topic). Renders are cached
// per section revision, so every page shares one render.
func (s *Server) render(id string) (html []byte, ok bool, err error) {
	s.m.mu.RLock()
	rev := s.m.sections[id]
	s.cacheMu.Lock()
	c, hit := s.cache[id]
	s.cacheMu.Unlock()
	if hit && c.rev == rev {
		s.m.mu.RUnlock()
		return c.html, true, nil
	}
	var (
		name string
		data any
	)
	switch {
	case id == sectionStatus:
		name, data = "status", s.m.statusLocked()
	case id == sectionCluster:
		name, data = "cluster", s.m.clusterLocked()
	case id == sectionTopics:
		name, data = "topics", s.m.topicsLocked()
	case id == sectionLegacy:
		name, data = "legacy", s.m.groupsLocked()
	case id == sectionGroups:
		name, data = "groups", s.m.groupsLocked()
	case id == sectionActions:
		name, data = "actions", s.actions.view(brokerIDs(s.m.clusterLocked()))
	case strings.HasPrefix(id, "topic:"):
		tv, exists := s.m.topicViewLocked(strings.TrimPrefix(id, "topic:"))
		if !exists {
			s.m.mu.RUnlock()
			return nil, false, nil
		}
		name, data = "topic", tv
	default:
		s.m.mu.RUnlock()
		return nil, false, nil
	}
	s.m.mu.RUnlock()
	html, err = s.execute(name, data)
	if err != nil {
		return nil, false, err
	}
	s.cacheMu.Lock()
	s.cache[id] = rendered{rev: rev, html: html}
	s.cacheMu.Unlock()
	return html, true, nil
}

// row returns a timeline event's row. Rows are cached, so every page
// streams the same render of an event; the cache keeps the events the
// timeline keeps.
func (s *Server) row(e Event) ([]byte, error) {
	day := time.Now().Format(time.DateOnly)
	s.cacheMu.Lock()
	r, hit := s.rows[e.Seq]
	s.cacheMu.Unlock()
	if hit && r.day == day {
		return r.html, nil
	}
	html, err := s.execute("event", e)
	if err != nil {
		return nil, err
	}
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	s.rows[e.Seq] = renderedRow{day: day, html: html}
	if limit := s.m.opts.TimelineLimit; len(s.rows) > 2*limit {
		for seq := range s.rows {
			if seq+uint64(limit) <= e.Seq {
				delete(s.rows, seq)
			}
		}
	}
	return html, nil
}

func (s *Server) znodeFragment(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Query().Get("path")
	if p == "" || p[0] != '/' || (len(p) > 1 && strings.HasSuffix(p, "/")) {
		http.Error(w, "path must be a znode path", http.StatusBadRequest)
		return
	}
	html, err := s.execute("znode", s.m.znode(p))
	if err != nil {
		s.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(html)
}

// keepAlive is how often an idle event stream gets a comment, so proxies
// and the browser see it alive.
const keepAlive = 15 * time.Second

// events streams the model's changes to one page as Server-Sent Events:
// "section" (a fragment's new HTML), "removed" (a fragment that went),
// "timeline" (new events' rows), "znodes" (paths the explorer may show) and
// "reload" (the server restarted since the page loaded). Each batch carries
// the id "<boot>.<rev>.<seq>", which the browser sends back as
// Last-Event-ID when it reconnects, so the stream resumes where it was.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	boot, rev, seq := parseResume(r)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	ch, stop := s.m.Subscribe()
	defer stop()
	s.m.touch(sectionStatus) // the count of open pages
	if boot != s.boot {
		fmt.Fprintf(w, "event: reload\ndata: {}\n\n")
		flusher.Flush()
		return
	}
	fmt.Fprintf(w, "retry: 1000\n\n")
	ping := time.NewTicker(keepAlive)
	defer ping.Stop()
	for {
		u := s.m.since(rev, seq)
		var b bytes.Buffer
		for _, id := range u.sections {
			html, exists, err := s.render(id)
			if err != nil {
				s.log.Error("rendering a section failed", zap.String("section", id), zap.Error(err))
				continue
			}
			if !exists {
				u.removed = append(u.removed, id)
				continue
			}
			writeEvent(&b, "section", map[string]string{"id": id, "html": string(html)})
		}
		for _, id := range u.removed {
			writeEvent(&b, "removed", id)
		}
		if len(u.events) > 0 {
			type row struct {
				Seq  uint64 `json:"seq"`
				HTML string `json:"html"`
			}
			rows := make([]row, 0, len(u.events))
			for _, e := range u.events {
				html, err := s.row(e)
				if err != nil {
					s.log.Error("rendering an event failed", zap.Error(err))
					continue
				}
				rows = append(rows, row{e.Seq, string(html)})
				seq = e.Seq
			}
			writeEvent(&b, "timeline", rows)
		}
		if u.all || len(u.touched) > 0 {
			writeEvent(&b, "znodes", map[string]any{"all": u.all, "paths": u.touched})
		}
		rev = u.rev
		if b.Len() > 0 {
			fmt.Fprintf(&b, "id: %s.%d.%d\n\n", s.boot, rev, seq)
			if _, err := w.Write(b.Bytes()); err != nil {
				return
			}
			flusher.Flush()
		}
		select {
		case <-r.Context().Done():
			return
		case <-ch:
		case <-ping.C:
			if _, err := fmt.Fprintf(w, ": keep-alive\n\n"); err != nil {
				return
			}
			flusher.Flush()
		}
	}
}

// parseResume reads where a page is: Last-Event-ID when the browser
// reconnects, else the query the page opened the stream with.
func parseResume(r *http.Request) (boot string, rev, seq uint64) {
	id := r.Header.Get("Last-Event-ID")
	if id == "" {
		q := r.URL.Query()
		id = q.Get("boot") + "." + q.Get("rev") + "." + q.Get("seq")
	}
	parts := strings.Split(id, ".")
	if len(parts) != 3 {
		return "", 0, 0
	}
	rev, _ = strconv.ParseUint(parts[1], 10, 64)
	seq, _ = strconv.ParseUint(parts[2], 10, 64)
	return parts[0], rev, seq
}

func writeEvent(b *bytes.Buffer, name string, v any) {
	data, _ := json.Marshal(v)
	fmt.Fprintf(b, "event: %s\ndata: %s\n\n", name, data)
}

// touch marks a section changed and wakes the pages.
func (m *Model) touch(id string) {
	m.mu.Lock()
	m.rev++
	m.touchLocked(id)
	m.mu.Unlock()
	m.notify()
}
