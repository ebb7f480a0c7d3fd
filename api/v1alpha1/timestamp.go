package v1alpha1

import (
	"fmt"
	"time"
)

// Timestamp is an instant in RFC 3339 with nanoseconds, in UTC
// ("2026-10-03T12:00:00.123456789Z"); empty is the zero instant.
//
// The storage core's records compare instants exactly (a snapshot due at t, a
// stream that finished at t, a member fenced at t), and a record the operator
// keeps in a CRD must read back as it was written. metav1.Time keeps whole
// seconds and metav1.MicroTime microseconds, so the record fields use this
// type; the fields people read (lastSyncTime) stay metav1.Time.
//
// +kubebuilder:validation:Format=date-time
// +kubebuilder:validation:MaxLength=64
type Timestamp string

// NewTimestamp renders t; the zero instant is the empty Timestamp.
func NewTimestamp(t time.Time) Timestamp {
	if t.IsZero() {
		return ""
	}
	return Timestamp(t.UTC().Format(time.RFC3339Nano))
}

// Time parses the timestamp; the empty one is the zero instant.
func (t Timestamp) Time() (time.Time, error) {
	if t == "" {
		return time.Time{}, nil
	}
	parsed, err := time.Parse(time.RFC3339Nano, string(t))
	if err != nil {
		return time.Time{}, fmt.Errorf("timestamp %q: %w", string(t), err)
	}
	return parsed.UTC(), nil
}
