package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"
)

// target is one cluster Main runs the load against: zkafka's brokers, or
// the in-process reference.
type target struct {
	name string
	run  func(ctx context.Context, opts Options, log io.Writer) (Result, error)
}

// series is one target's results for one variant of the load, a result per
// run.
type series struct {
	label   string // the target with the variant's suffix
	results []Result
}

// report collects Main's results and prints the final table: a row per run,
// the medians when there were several runs, then the ratios of zkafka's
// figures to the reference's (of the medians) and of a transactional load
// to its idempotent twin.
type report struct {
	opts     Options
	runs     int
	variants int
	targets  []target
	rows     []Result
	series   map[[2]int]*series // by target and variant index
}

func (r *report) add(targetIdx, variantIdx, run int, res Result) {
	if r.series == nil {
		r.series = make(map[[2]int]*series)
	}
	key := [2]int{targetIdx, variantIdx}
	s := r.series[key]
	if s == nil {
		s = &series{label: res.Target}
		r.series[key] = s
	}
	s.results = append(s.results, res)
	if r.runs > 1 {
		res.Target += fmt.Sprintf("[run=%d]", run+1)
	}
	r.rows = append(r.rows, res)
}

// summary is a series' one result, or the median of its runs.
func (r *report) summary(targetIdx, variantIdx int) Result {
	s := r.series[[2]int{targetIdx, variantIdx}]
	if len(s.results) == 1 {
		return s.results[0]
	}
	m := medianResult(s.results)
	m.Target = s.label + "[median]"
	return m
}

func (r *report) write(w io.Writer) {
	rows := r.rows
	if r.runs > 1 {
		for ti := range r.targets {
			for vi := range r.variants {
				rows = append(rows, r.summary(ti, vi))
			}
		}
	}
	writeTable(w, r.opts, rows)

	medians := ""
	if r.runs > 1 {
		medians = fmt.Sprintf(" (medians of %d runs)", r.runs)
	}
	if len(r.targets) == 2 {
		for vi := range r.variants {
			z, ref := r.summary(0, vi), r.summary(1, vi)
			fmt.Fprintf(w, "zkafka/%s %s", r.targets[1].name, ratios(r.opts.Mode, z, ref))
			if r.variants > 1 {
				fmt.Fprintf(w, " %s", variantSuffix(r.opts, vi))
			}
			fmt.Fprintln(w, medians)
		}
	}
	if r.opts.TransactionSize > 0 {
		for ti := range r.targets {
			idem, txn := r.summary(ti, 0), r.summary(ti, 1)
			fmt.Fprintf(w, "%s: transactional/idempotent produce ratio %.2f; commit p50 %.2f ms, p99 %.2f ms over %d transactions%s\n",
				r.series[[2]int{ti, 1}].label, ratio(txn.ProduceRecordsPerSec, idem.ProduceRecordsPerSec),
				millis(txn.CommitP50), millis(txn.CommitP99), txn.Transactions, medians)
		}
	}
}

// variantSuffix names variant vi of a transactional load as Main labels its rows.
func variantSuffix(opts Options, vi int) string {
	if vi == 0 {
		return "[idempotent]"
	}
	return fmt.Sprintf("[txn=%d]", opts.TransactionSize)
}

// ratios compares what mode measured: rates (higher is better for zkafka)
// or, end to end, latencies (lower is better).
func ratios(mode string, z, ref Result) string {
	produce := ratio(z.ProduceRecordsPerSec, ref.ProduceRecordsPerSec)
	consume := ratio(z.ConsumeRecordsPerSec, ref.ConsumeRecordsPerSec)
	switch mode {
	case ModeProduce:
		return fmt.Sprintf("produce ratio %.2f", produce)
	case ModeConsume:
		return fmt.Sprintf("consume ratio %.2f", consume)
	case ModeE2E:
		return fmt.Sprintf("end-to-end latency ratio p50 %.2f, p99 %.2f",
			ratio(float64(z.E2EP50), float64(ref.E2EP50)), ratio(float64(z.E2EP99), float64(ref.E2EP99)))
	}
	return fmt.Sprintf("produce ratio %.2f, consume ratio %.2f", produce, consume)
}

// writeTable prints one row per result, with the columns opts.Mode measures
// and the load's shape from opts.
func writeTable(w io.Writer, opts Options, results []Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	switch opts.Mode {
	case ModeProduce:
		fmt.Fprintln(tw, "target\trecords\tsize\tacks\tproduce rec/s\tproduce MB/s\tp50 ms\tp99 ms\t")
	case ModeConsume:
		fmt.Fprintln(tw, "target\trecords\tsize\tconsume rec/s\tconsume MB/s\t")
	case ModeE2E:
		fmt.Fprintln(tw, "target\trecords\tsize\tacks\trate rec/s\tp50 ms\tp99 ms\tp99.9 ms\tmax ms\t")
	default:
		fmt.Fprintln(tw, "target\trecords\tsize\tacks\tproduce rec/s\tproduce MB/s\tp50 ms\tp99 ms\tconsume rec/s\tconsume MB/s\t")
	}
	for _, r := range results {
		switch opts.Mode {
		case ModeProduce:
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%.0f\t%.1f\t%.2f\t%.2f\t\n", r.Target, r.Records, opts.RecordSize, opts.Acks,
				r.ProduceRecordsPerSec, r.ProduceMBPerSec, millis(r.P50), millis(r.P99))
		case ModeConsume:
			fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%.1f\t\n", r.Target, r.Records, opts.RecordSize, r.ConsumeRecordsPerSec, r.ConsumeMBPerSec)
		case ModeE2E:
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%.0f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", r.Target, r.Records, opts.RecordSize, opts.Acks,
				r.ProduceRecordsPerSec, millis(r.E2EP50), millis(r.E2EP99), millis(r.E2EP999), millis(r.E2EMax))
		default:
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%.0f\t%.1f\t%.2f\t%.2f\t%.0f\t%.1f\t\n",
				r.Target, r.Records, opts.RecordSize, opts.Acks,
				r.ProduceRecordsPerSec, r.ProduceMBPerSec, millis(r.P50), millis(r.P99),
				r.ConsumeRecordsPerSec, r.ConsumeMBPerSec)
		}
	}
	tw.Flush()
}

// medianResult is the median of each figure over results, taken figure by
// figure (the median run of one figure need not be that of another).
func medianResult(results []Result) Result {
	f := func(get func(Result) float64) float64 {
		v := make([]float64, len(results))
		for i, r := range results {
			v[i] = get(r)
		}
		slices.Sort(v)
		if n := len(v); n%2 == 0 {
			return (v[n/2-1] + v[n/2]) / 2
		}
		return v[len(v)/2]
	}
	d := func(get func(Result) time.Duration) time.Duration {
		return time.Duration(f(func(r Result) float64 { return float64(get(r)) }))
	}
	return Result{
		Records:              results[0].Records,
		Bytes:                results[0].Bytes,
		ProduceDuration:      d(func(r Result) time.Duration { return r.ProduceDuration }),
		ConsumeDuration:      d(func(r Result) time.Duration { return r.ConsumeDuration }),
		ProduceRecordsPerSec: f(func(r Result) float64 { return r.ProduceRecordsPerSec }),
		ProduceMBPerSec:      f(func(r Result) float64 { return r.ProduceMBPerSec }),
		ConsumeRecordsPerSec: f(func(r Result) float64 { return r.ConsumeRecordsPerSec }),
		ConsumeMBPerSec:      f(func(r Result) float64 { return r.ConsumeMBPerSec }),
		P50:                  d(func(r Result) time.Duration { return r.P50 }),
		P99:                  d(func(r Result) time.Duration { return r.P99 }),
		E2EP50:               d(func(r Result) time.Duration { return r.E2EP50 }),
		E2EP99:               d(func(r Result) time.Duration { return r.E2EP99 }),
		E2EP999:              d(func(r Result) time.Duration { return r.E2EP999 }),
		E2EMax:               d(func(r Result) time.Duration { return r.E2EMax }),
		Transactions:         results[0].Transactions,
		CommitP50:            d(func(r Result) time.Duration { return r.CommitP50 }),
		CommitP99:            d(func(r Result) time.Duration { return r.CommitP99 }),
	}
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
