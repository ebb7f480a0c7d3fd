package network

import (
	"errors"
	"fmt"
)

// The outcomes of Call that are not a round trip. Test them with errors.Is.
var (
	// ErrUnreachable: a partition blocks the request or the response.
	ErrUnreachable = errors.New("endpoint unreachable")
	// ErrTimeout: no answer came back; the request may or may not have been
	// acted on, as with a real RPC's deadline.
	ErrTimeout = errors.New("call timed out")
	// ErrResponseLost: the request arrived and was acted on, and the answer was
	// lost. It matches ErrTimeout: the caller cannot tell, the simulation can.
	ErrResponseLost = fmt.Errorf("%w: the response was lost after the request arrived", ErrTimeout)
)
