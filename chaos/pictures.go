package chaos

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// DrawTimeline writes timeline.svg and timeline.png to dir: the records acknowledged each second
// (acks=all, and acks=1 when it ran) over the run, each fault shaded from its injection until it was
// healed (the process restarted or continued, the network or the disk given back), one colour per
// fault kind.
func (rep *Report) DrawTimeline(dir string) error {
	p := plot.New()
	p.Title.Text = "Acknowledged records per second, faults shaded"
	if rep.Info.Partial {
		p.Title.Text += " (partial run)"
	}
	p.X.Label.Text = "seconds since the run started"
	p.Y.Label.Text = "records acknowledged per second"
	top := 1.0
	for _, counts := range rep.PerSecond {
		for _, n := range counts {
			top = max(top, float64(n))
		}
	}
	top *= 1.1
	p.X.Min, p.X.Max = 0, max(rep.End, 1)
	p.Y.Min, p.Y.Max = 0, top

	var kinds []string
	for _, s := range rep.Spans {
		if k := kindOf(s.name); !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	slices.SortFunc(kinds, func(a, b string) int { return kindIndex(a) - kindIndex(b) })
	shaded := map[string]bool{}
	var labels plotter.XYLabels
	for _, s := range rep.Spans {
		k := kindOf(s.name)
		poly, err := plotter.NewPolygon(plotter.XYs{{X: s.start, Y: 0}, {X: s.end, Y: 0}, {X: s.end, Y: top}, {X: s.start, Y: top}})
		if err != nil {
			return err
		}
		poly.Color = light(plotutil.Color(slices.Index(kinds, k) + 2))
		poly.LineStyle.Width = 0
		p.Add(poly)
		if !shaded[k] {
			shaded[k] = true
			p.Legend.Add(k, poly)
		}
		if len(rep.Spans) <= 30 {
			labels.XYs = append(labels.XYs, plotter.XY{X: s.start, Y: top * 0.97})
			labels.Labels = append(labels.Labels, strings.TrimPrefix(s.name, k+"/"))
		}
	}
	for i, acks := range []string{"all", "1"} {
		counts := rep.PerSecond[acks]
		if len(counts) == 0 {
			continue
		}
		xys := make(plotter.XYs, len(counts))
		for s, n := range counts {
			xys[s] = plotter.XY{X: float64(s) + 0.5, Y: float64(n)}
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1)
		p.Add(l)
		p.Legend.Add("acks="+acks, l)
	}
	if len(labels.XYs) > 0 {
		lp, err := plotter.NewLabels(labels)
		if err != nil {
			return err
		}
		for i := range lp.TextStyle {
			lp.TextStyle[i].Rotation = -math.Pi / 2
			lp.TextStyle[i].Font.Size = vg.Points(7)
		}
		p.Add(lp)
	}
	p.Legend.Top = true
	p.Legend.Left = false
	p.Legend.Padding = vg.Points(2)
	p.Legend.ThumbnailWidth = vg.Points(12)
	width := vg.Length(24) * vg.Centimeter
	for _, ext := range []string{".svg", ".png"} {
		if err := p.Save(width, 10*vg.Centimeter, filepath.Join(dir, TimelineName+ext)); err != nil {
			return fmt.Errorf("draw %s%s: %w", TimelineName, ext, err)
		}
	}
	return nil
}

func kindOf(fault string) string {
	k, _, _ := strings.Cut(fault, "/")
	return k
}

func kindIndex(kind string) int {
	return slices.IndexFunc(Kinds, func(k Kind) bool { return k.Name == kind })
}

// light is c mixed with white, for shading behind the lines.
func light(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8((v>>8)/3 + 2*255/3) }
	return color.RGBA{R: mix(r), G: mix(g), B: mix(b), A: 255}
}
