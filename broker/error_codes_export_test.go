package broker

import (
	"reflect"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ErrorCodes lists every ErrorCode field of a response, each struct's
// before those of its entries (what the broker checks when it answers a
// failed handler with UNKNOWN_SERVER_ERROR).
func ErrorCodes(resp kmsg.Response) []int16 { return errorCodes(nil, reflect.ValueOf(resp)) }
