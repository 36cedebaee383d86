package brokerconfig

import "testing"

func TestParseValue(t *testing.T) {
	for _, tc := range []struct {
		typ       Type
		in, want  string
		wantError string
	}{
		{TypeInt, " 42 ", "42", ""},
		{TypeInt, "3000000000", "", "Invalid value 3000000000 for configuration c: Not a number of type INT"},
		{TypeLong, "abc", "", "Invalid value abc for configuration c: Not a number of type LONG"},
		{TypeBoolean, "TRUE", "true", ""},
		{TypeBoolean, "yes", "", "Invalid value yes for configuration c: Expected value to be either true or false"},
		{TypeDouble, "0.5", "0.5", ""},
		{TypeDouble, "1", "1.0", ""},
		// Java's Double.toString: scientific below 10^-3 and from 10^7.
		{TypeDouble, "1.7976931348623157E308", "1.7976931348623157E308", ""},
		{TypeDouble, "10000000", "1.0E7", ""},
		{TypeDouble, "9999999.5", "9999999.5", ""},
		{TypeDouble, "0.0001", "1.0E-4", ""},
		{TypeList, " compact , delete ", "compact,delete", ""},
		{TypeList, "  ", "", ""},
		{TypeString, " lz4 ", "lz4", ""},
	} {
		got, err := ParseValue("c", tc.typ, tc.in)
		switch {
		case tc.wantError != "" && (err == nil || err.Error() != tc.wantError):
			t.Errorf("%v %q: error %v, want %q", tc.typ, tc.in, err, tc.wantError)
		case tc.wantError == "" && (err != nil || got != tc.want):
			t.Errorf("%v %q = %q, %v; want %q", tc.typ, tc.in, got, err, tc.want)
		}
	}
}
