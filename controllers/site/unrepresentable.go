package site

import (
	"errors"
	"fmt"
	"math"
)

// ErrUnrepresentable reports a record that a CRD cannot hold exactly: a value
// out of the field's range, or a state the API has no word for. It is refused
// before anything is written, never stored approximately.
var ErrUnrepresentable = errors.New("record cannot be kept in a CRD")

func toInt64(what string, v uint64) (int64, error) {
	if v > math.MaxInt64 {
		return 0, fmt.Errorf("%w: %s %d exceeds int64", ErrUnrepresentable, what, v)
	}
	return int64(v), nil
}

func toInt32(what string, v int64) (int32, error) {
	if v > math.MaxInt32 || v < math.MinInt32 {
		return 0, fmt.Errorf("%w: %s %d exceeds int32", ErrUnrepresentable, what, v)
	}
	return int32(v), nil
}

func toUint64(what string, v int64) (uint64, error) {
	if v < 0 {
		return 0, fmt.Errorf("%s %d is negative", what, v)
	}
	return uint64(v), nil
}
