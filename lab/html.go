package lab

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
)

var reportTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>zkafka rebalance lab: {{.Info.Scenario}}</title>
<style>
body{font-family:sans-serif;max-width:70em;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}
td:first-child,th:first-child{text-align:left}.partial{color:#a00;font-weight:bold}img{max-width:100%}
</style></head><body>
<h1>Rebalance lab: {{.Info.Scenario}}</h1>
{{if .Info.Partial}}<p class="partial">Partial run: {{.Info.Reason}}</p>{{end}}
<p>{{.Info.Members}} members, {{.Info.Partitions}} partitions of topic {{.Info.Topic}},
{{.Info.RecordsPerSecond}} records/s, {{.Info.ProcessingMs}} ms of processing per record, max.poll.records={{.Info.MaxPollRecords}};
session.timeout.ms={{.Info.SessionTimeoutMs}}, heartbeat.interval.ms={{.Info.HeartbeatMs}},
max.poll.interval.ms={{.Info.MaxPollIntervalMs}}, zookeeper.session.timeout.ms={{.Info.ZKSessionTimeoutMs}},
auto.commit.interval.ms={{.Info.AutoCommitMs}}; one action every {{.Info.StepMs}} ms. Started {{.Info.Started}}.
{{if .Info.ConsumerSessionTimeoutMs}}Consumer-protocol modes follow the brokers' group.consumer.session.timeout.ms={{.Info.ConsumerSessionTimeoutMs}}
and group.consumer.heartbeat.interval.ms={{.Info.ConsumerHeartbeatMs}}.{{end}}
{{if .Info.Client}}Members run with the {{.Info.Client}} client.{{end}}</p>
<h2>Figures</h2>
<table><tr><th>figure</th>{{range .Figures}}<th>{{.Mode}}{{if .Partial}} (partial){{end}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
<p>Raw events: events.jsonl and events.csv next to this file.</p>
{{range .Pictures}}<h2>{{.Title}}</h2><img alt="{{.Title}}" src="{{.Data}}">
{{end}}</body></html>
`))

// writeHTML writes a self-contained report: the SVG pictures are inlined
// as data URIs, so the file opens offline and alone.
func writeHTML(w io.Writer, dir string, info RunInfo, figs []Figures, pics []Picture) error {
	type pic struct {
		Title string
		Data  template.URL
	}
	var inlined []pic
	for _, p := range pics {
		b, err := os.ReadFile(filepath.Join(dir, p.Name+".svg"))
		if err != nil {
			return err
		}
		inlined = append(inlined, pic{Title: p.Title, Data: template.URL("data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(b))})
	}
	var rows [][]string
	for _, r := range tableRows {
		row := []string{r.label}
		for _, f := range figs {
			row = append(row, r.value(f))
		}
		rows = append(rows, row)
	}
	var buf bytes.Buffer
	if err := reportTemplate.Execute(&buf, map[string]any{"Info": info, "Figures": figs, "Rows": rows, "Pictures": inlined}); err != nil {
		return fmt.Errorf("report.html: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}
