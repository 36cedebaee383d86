package kafka

import (
	"math"
	"testing"
)

// TestJavaDouble: doubles as Java's Double.toString writes them.
func TestJavaDouble(t *testing.T) {
	for v, want := range map[float64]string{
		1024: "1024.0", 0.5: "0.5", 12.5: "12.5", 0: "0.0", 1e7: "1.0E7", 1.5e-4: "1.5E-4",
		123456789: "1.23456789E8", -2: "-2.0", math.MaxFloat64: "1.7976931348623157E308",
	} {
		if got := JavaDouble(v); got != want {
			t.Errorf("JavaDouble(%v) = %q, want %q", v, got, want)
		}
	}
}
