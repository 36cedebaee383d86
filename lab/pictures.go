package lab

import (
	"fmt"
	"image/color"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Picture is one image of a report, written as name.svg and name.png.
type Picture struct {
	Name  string
	Title string
}

// DrawPictures writes the report's pictures to dir: a partition-ownership
// timeline per mode, all on one time axis (seconds from the scenario's
// start), and bars of unfetched partition-seconds and of duplicates per
// mode.
func DrawPictures(dir string, as []Analysis) ([]Picture, error) {
	var pics []Picture
	span := 0.0
	for _, a := range as {
		span = max(span, a.End-a.Start)
	}
	for _, a := range as {
		p, err := timeline(a, span)
		if err != nil {
			return nil, err
		}
		pic := Picture{Name: "timeline-" + a.Figures.Mode, Title: "Partition ownership, " + a.Figures.Mode}
		if err := save(dir, pic.Name, p, 24*vg.Centimeter, vg.Length(4+0.6*float64(max(a.Partitions, 1)))*vg.Centimeter); err != nil {
			return nil, err
		}
		pics = append(pics, pic)
	}
	bars := []struct {
		name, title, unit string
		value             func(Figures) float64
	}{
		{"unfetched", "Partition-seconds with no member fetching", "partition-seconds", func(f Figures) float64 { return f.UnfetchedPartitionSeconds }},
		{"duplicates", "Records processed more than once", "records", func(f Figures) float64 { return float64(f.Duplicates) }},
	}
	if slices.ContainsFunc(as, func(a Analysis) bool { return len(a.Herd) > 1 }) {
		p, err := herdChart(as)
		if err != nil {
			return nil, err
		}
		pic := Picture{Name: "herd", Title: "ZooKeeper watch notifications per join, by group size"}
		if err := save(dir, pic.Name, p, 16*vg.Centimeter, 10*vg.Centimeter); err != nil {
			return nil, err
		}
		pics = append(pics, pic)
	}
	for _, b := range bars {
		p, err := barChart(as, b.title, b.unit, b.value)
		if err != nil {
			return nil, err
		}
		pic := Picture{Name: b.name, Title: b.title}
		if err := save(dir, pic.Name, p, vg.Length(8+2.2*float64(len(as)))*vg.Centimeter, 10*vg.Centimeter); err != nil {
			return nil, err
		}
		pics = append(pics, pic)
	}
	return pics, nil
}

func save(dir, name string, p *plot.Plot, w, h vg.Length) error {
	for _, ext := range []string{".svg", ".png"} {
		if err := p.Save(w, h, filepath.Join(dir, name+ext)); err != nil {
			return fmt.Errorf("draw %s%s: %w", name, ext, err)
		}
	}
	return nil
}

// timeline draws one row per partition, a bar coloured by the member
// fetching it, gaps where no member does, and a dashed line at each of the
// scenario's actions.
func timeline(a Analysis, span float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: partition ownership", a.Figures.Mode)
	if a.Figures.Partial {
		p.Title.Text += " (partial run)"
	}
	p.X.Label.Text = "seconds since the scenario started"
	p.Y.Label.Text = "partition"
	p.X.Min, p.X.Max = 0, max(span, 1)
	p.Y.Min, p.Y.Max = -1, float64(a.Partitions)
	var members []string
	for _, s := range a.Segments {
		if !slices.Contains(members, s.Member) {
			members = append(members, s.Member)
		}
	}
	slices.Sort(members)
	legend := map[string]bool{}
	for _, s := range a.Segments {
		x0, x1 := max(s.Start, a.Start)-a.Start, min(s.End, a.End)-a.Start
		if x1 <= x0 {
			continue
		}
		y := float64(s.Partition)
		l, err := plotter.NewLine(plotter.XYs{{X: x0, Y: y}, {X: x1, Y: y}})
		if err != nil {
			return nil, err
		}
		l.Color = plotutil.Color(slices.Index(members, s.Member))
		l.Width = vg.Points(7)
		p.Add(l)
		if !legend[s.Member] {
			legend[s.Member] = true
			p.Legend.Add(s.Member, l)
		}
	}
	var labels plotter.XYLabels
	for _, m := range a.Markers {
		x := m.T - a.Start
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: -1}, {X: x, Y: float64(a.Partitions)}})
		if err != nil {
			return nil, err
		}
		l.Color = color.Gray{Y: 60}
		l.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
		p.Add(l)
		labels.XYs = append(labels.XYs, plotter.XY{X: x, Y: -0.8})
		labels.Labels = append(labels.Labels, m.label())
	}
	if len(labels.XYs) > 0 {
		lp, err := plotter.NewLabels(labels)
		if err != nil {
			return nil, err
		}
		p.Add(lp)
	}
	p.Legend.Top = true
	p.Legend.Left = false
	p.Legend.XOffs = vg.Centimeter * 2
	p.Legend.YOffs = vg.Centimeter * 0.9
	p.Legend.Padding = vg.Points(2)
	return p, nil
}

// barChart draws one bar per mode.
func barChart(as []Analysis, title, unit string, value func(Figures) float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = unit
	var vs plotter.Values
	var names []string
	for _, a := range as {
		vs = append(vs, value(a.Figures))
		names = append(names, a.Figures.Mode)
	}
	b, err := plotter.NewBarChart(vs, vg.Centimeter)
	if err != nil {
		return nil, err
	}
	b.Color = plotutil.Color(0)
	b.LineStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(0.5)}
	p.Add(b)
	p.NominalX(names...)
	p.Y.Min = 0
	return p, nil
}

// herdChart draws, per mode, the watch notifications one join cost against
// the group's size after it: a line growing with the size for legacy
// members (each is notified), flat at zero for the coordinator's.
func herdChart(as []Analysis) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "ZooKeeper watch notifications per join"
	p.X.Label.Text = "members after the join"
	p.Y.Label.Text = "notifications, all members"
	p.Y.Min = 0
	for i, a := range as {
		if len(a.Herd) == 0 {
			continue
		}
		var xys plotter.XYs
		for _, h := range a.Herd {
			xys = append(xys, plotter.XY{X: float64(h.Size), Y: float64(h.ZKWatchNotifications)})
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		l.Color, pts.Color = plotutil.Color(i), plotutil.Color(i)
		pts.Shape = plotutil.Shape(i)
		p.Add(l, pts)
		p.Legend.Add(a.Figures.Mode, l, pts)
	}
	p.Legend.Top, p.Legend.Left = true, true
	return p, nil
}
