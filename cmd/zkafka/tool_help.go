package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Kafka's tools print their help with joptsimple's BuiltinHelpFormatter
// (jopt-simple 5.0.4): a two-column table of 80 characters, options sorted
// by name, each cell wrapped at Java's line-break opportunities and every
// line padded to the full width of both columns.
const (
	helpWidth     = 80
	helpSeparator = 2 // spaces between the columns
	helpIndent    = "  "
)

// helpOption is CommandDefaultOptions' --help, which every Kafka tool has.
var helpOption = flagOpt("help", "Print usage information.")

// flagOpt is an option without an argument (parser.accepts(name, desc)).
func flagOpt(name, desc string) optionSpec {
	return optionSpec{name: name, desc: desc}
}

// argOpt is an option with a required argument described as arg
// (withRequiredArg.describedAs(arg)).
func argOpt(name, arg, desc string) optionSpec {
	return optionSpec{name: name, hasArg: true, arg: arg, desc: desc}
}

// typed sets the argument's type as joptsimple names it (ofType).
func (s optionSpec) typed(t string) optionSpec { s.argType = t; return s }

// defaults sets the default the help shows (defaultsTo).
func (s optionSpec) defaults(v string) optionSpec { s.def = v; return s }

// optional makes the argument optional (withOptionalArg).
func (s optionSpec) optional() optionSpec { s.optionalArg = true; return s }

// display is the option's left cell: "--name <Type: arg>", square brackets
// for an optional argument, "String" for an untyped one.
func (s optionSpec) display() string {
	if !s.hasArg && !s.optionalArg {
		return "--" + s.name
	}
	open, end := "<", ">"
	if s.optionalArg {
		open, end = "[", "]"
	}
	ind := cmp.Or(s.argType, "String")
	if s.arg != "" {
		ind += ": " + s.arg
	}
	return "--" + s.name + " " + open + ind + end
}

// description is the right cell, with " (default: X)" appended.
func (s optionSpec) description() string {
	if s.def == "" {
		return s.desc
	}
	return strings.TrimSpace(s.desc + " (default: " + s.def + ")")
}

// printUsage is CommandLineUtils.printUsageAndDie without the exit: the
// message, then the options table.
func printUsage(w io.Writer, message string, specs []optionSpec) {
	fmt.Fprintln(w, message)
	io.WriteString(w, formatHelp(specs))
}

// helpNeeded is Kafka's CommandLineUtils.printHelpAndExitIfNeeded: with no
// arguments or with --help a tool prints message and its options on stderr
// and exits 1.
func helpNeeded(args []string, opts toolOptions, message string, specs []optionSpec, stderr io.Writer) bool {
	if len(args) > 0 && !opts.has("help") {
		return false
	}
	printUsage(stderr, message, specs)
	return true
}

type helpRow struct{ option, description string }

// formatHelp lays specs out as BuiltinHelpFormatter does.
func formatHelp(specs []optionSpec) string {
	sorted := slices.Clone(specs)
	slices.SortFunc(sorted, func(a, b optionSpec) int { return strings.Compare(a.name, b.name) })
	rows := []helpRow{{"Option", "Description"}, {"------", "-----------"}}
	for _, s := range sorted {
		rows = append(rows, helpRow{s.display(), s.description()})
	}
	// The widths are taken twice: from the raw cells to wrap them, then
	// from the wrapped lines to pad them (joptsimple's Rows.fitToWidth).
	optW, descW := columnWidths(rows)
	var fitted []helpRow
	for _, r := range rows {
		opts, descs := wrapCell(r.option, optW), wrapCell(r.description, descW)
		for i := range max(len(opts), len(descs)) {
			fitted = append(fitted, helpRow{itemOr(opts, i), itemOr(descs, i)})
		}
	}
	optW, descW = columnWidths(fitted)
	var b strings.Builder
	for _, r := range fitted {
		b.WriteString(padRight(r.option, optW))
		b.WriteString(strings.Repeat(" ", helpSeparator))
		b.WriteString(padRight(r.description, descW))
		b.WriteByte('\n')
	}
	return b.String()
}

func columnWidths(rows []helpRow) (optW, descW int) {
	for _, r := range rows {
		optW, descW = max(optW, len(r.option)), max(descW, len(r.description))
	}
	optW = min((helpWidth-helpSeparator)/2, optW)
	return optW, min(helpWidth-optW-helpSeparator, descW)
}

func itemOr(items []string, i int) string {
	if i < len(items) {
		return items[i]
	}
	return ""
}

func padRight(s string, width int) string {
	return s + strings.Repeat(" ", max(0, width-len(s)))
}

// wrapCell is joptsimple's Columns.piecesOf: each line of the trimmed text
// is filled word by word; a word that does not fit starts a new piece,
// indented by two spaces. Blank lines vanish, as Java's split and an empty
// BreakIterator leave them.
func wrapCell(text string, width int) []string {
	var pieces []string
	lines := strings.Split(strings.TrimSpace(text), "\n")
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1] // String.split drops trailing empty strings
	}
	for _, line := range lines {
		var piece strings.Builder
		for _, word := range breakWords(line) {
			if piece.Len()+len(word) > width {
				pieces = append(pieces, strings.TrimRight(piece.String(), " \t"))
				piece.Reset()
				piece.WriteString(helpIndent)
			}
			piece.WriteString(word)
		}
		if piece.Len() > 0 {
			pieces = append(pieces, piece.String())
		}
	}
	return pieces
}

// breakWords splits s at the line-break opportunities of Java's
// BreakIterator.getLineInstance() for the ASCII text of Kafka's help: after
// spaces; after a run of hyphens, except a leading minus sign of a number;
// after closing punctuation (. , : ; ! ? % ) ] }), except a decimal point or
// comma between digits; after a closing double quote; before an opening bracket. Each word
// keeps its trailing spaces.
func breakWords(s string) []string {
	var words []string
	start := 0
	for i := 1; i < len(s); i++ {
		if breakBefore(s, i) {
			words = append(words, s[start:i])
			start = i
		}
	}
	if start < len(s) {
		words = append(words, s[start:])
	}
	return words
}

func breakBefore(s string, i int) bool {
	prev, next := s[i-1], s[i]
	space := func(c byte) bool { return c == ' ' || c == '\t' }
	digit := func(c byte) bool { return c >= '0' && c <= '9' }
	closing := func(c byte) bool { return strings.IndexByte(".,:;!?%)]}", c) >= 0 }
	switch {
	case space(next):
		return false
	case space(prev):
		return true
	case strings.IndexByte("([{", next) >= 0:
		return true
	case prev == '-':
		if next == '-' {
			return false
		}
		j := i - 1
		for j > 0 && s[j-1] == '-' {
			j--
		}
		leading := j == 0 || space(s[j-1])
		return !(leading && digit(next))
	case closing(prev):
		if closing(next) {
			return false
		}
		return !((prev == '.' || prev == ',') && i >= 2 && digit(s[i-2]) && digit(next))
	case prev == '"':
		return i >= 2 && !space(s[i-2])
	}
	return false
}
