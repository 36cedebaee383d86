package zkpaths

import (
	"fmt"
	"strconv"
)

// ControllerRegistration is the data of the ephemeral /controller, created by
// the broker that wins the election:
//
//	{"version":1,"brokerid":3,"timestamp":"1614570663255"}
type ControllerRegistration struct {
	BrokerID  int32
	Timestamp int64 // election time, epoch milliseconds
}

// Encode returns the version-1 JSON.
func (c ControllerRegistration) Encode() []byte {
	return newObject().int("version", 1).int("brokerid", int64(c.BrokerID)).long("timestamp", c.Timestamp).bytes()
}

// DecodeControllerRegistration reads the data of /controller.
func DecodeControllerRegistration(data []byte) (ControllerRegistration, error) {
	o, err := parseObject("controller", data)
	if err != nil {
		return ControllerRegistration{}, err
	}
	if _, err := o.version(); err != nil {
		return ControllerRegistration{}, err
	}
	var c ControllerRegistration
	if err := o.required("brokerid", &c.BrokerID); err != nil {
		return ControllerRegistration{}, err
	}
	if c.Timestamp, _, err = o.optionalLong("timestamp"); err != nil {
		return ControllerRegistration{}, err
	}
	return c, nil
}

// InitialControllerEpoch is what /controller_epoch is created with when
// missing, so the first elected controller has epoch 1 (Kafka 2.1+).
const InitialControllerEpoch int32 = 0

// EncodeControllerEpoch returns the data of /controller_epoch: the epoch as a
// bare decimal, not JSON.
//
//	17
func EncodeControllerEpoch(epoch int32) []byte {
	return strconv.AppendInt(nil, int64(epoch), 10)
}

// DecodeControllerEpoch reads the data of /controller_epoch.
func DecodeControllerEpoch(data []byte) (int32, error) {
	epoch, err := strconv.ParseInt(string(data), 10, 32)
	if err != nil || epoch < 0 {
		return 0, fmt.Errorf("%w: controller epoch %q is not a non-negative int32", ErrMalformed, data)
	}
	return int32(epoch), nil
}
