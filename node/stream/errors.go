package stream

import "errors"

// The transport's own outcomes. Refusals of the receiving agent or its pool
// arrive as a *RemoteError that unwraps to the sentinel the receiver returned
// (backend.ErrNoBase, agent.ErrUnauthorized, ...); a receiver that cannot be
// dialled is reported as wrapping chain.ErrUnreachable.
var (
	// ErrProtocol: the peer sent something that is not this protocol (a bad
	// frame, an unknown version, a field beyond its limit).
	ErrProtocol = errors.New("stream protocol violation")
	// ErrBusy: the receiving node already takes as many streams as it allows;
	// the sender tries again later.
	ErrBusy = errors.New("receiver busy")
	// ErrHandshake: the TLS handshake failed, for example because the
	// receiver's certificate is not signed by a trusted CA.
	ErrHandshake = errors.New("TLS handshake failed")
	// ErrInterrupted: the connection broke, or went silent past its deadline,
	// before the receiver answered. The receiver's pool took nothing it had
	// not acknowledged; the sender retries the stream.
	ErrInterrupted = errors.New("stream interrupted")
	// ErrClosed: the client was closed while the stream was in flight, or
	// before it began.
	ErrClosed = errors.New("stream client closed")
)

// RemoteError is the receiver's answer when it refused a stream: the kind,
// which errors.Is matches through Unwrap, and the receiver's own words.
type RemoteError struct {
	Kind    Kind
	Message string // what the receiver said, the token redacted
}

func (e *RemoteError) Error() string {
	if e.Message == "" {
		return "receiver refused the stream: " + e.Kind.String()
	}
	return "receiver refused the stream: " + e.Message
}

// Unwrap returns the sentinel of the kind; nil for KindOther.
func (e *RemoteError) Unwrap() error { return e.Kind.sentinel() }
