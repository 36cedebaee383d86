package kafka

import (
	"math"
	"strconv"
	"strings"
)

// JavaDouble prints a double as Java's Double.toString does, which is how
// Kafka stores and prints doubles (quotas, double configs): always with a
// fraction, and in scientific notation below 10^-3 and from 10^7 up: 1024.0,
// 0.5, 1.0E7, 1.7976931348623157E308.
func JavaDouble(v float64) string {
	if a := math.Abs(v); a != 0 && (a < 1e-3 || a >= 1e7) && !math.IsInf(v, 0) {
		mant, exp, _ := strings.Cut(strconv.FormatFloat(v, 'E', -1, 64), "E")
		if !strings.Contains(mant, ".") {
			mant += ".0"
		}
		e, _ := strconv.Atoi(exp)
		return mant + "E" + strconv.Itoa(e)
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(s, ".IN") { // not +Inf, -Inf or NaN
		s += ".0"
	}
	return s
}
