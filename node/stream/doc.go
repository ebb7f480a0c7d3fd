// Package stream carries snapshot streams between the sites' node agents:
// TCP with TLS 1.3, one connection per stream, authorised by the receiving
// replica's token. Client is the agent's Transport on the sending node;
// Server hands what arrives to the receiving node's agent.
//
// # Protocol
//
// The sender writes a header frame (the agent.StreamHeader, token included:
// see header.go), then the body as length-prefixed chunks closed by an end
// marker (body.go). The receiver reads the header, hands the body to its
// agent, and writes one answer frame (answer.go): ok, or a refusal with a
// machine-readable Kind that the sender maps back to the sentinel the agent
// returned, so errors.Is(err, backend.ErrNoBase) holds on the sending side.
//
// The answer may come before the body is through: the agent refuses a stream
// before reading it, and answers ok without reading a snapshot it holds. The
// sender listens for the answer while it writes and stops when it comes; the
// receiver discards what is still in flight, chunk by chunk and within a
// bound, before it closes, so that closing with unread bytes does not reset
// the connection under an answer the sender has not read yet.
//
// # Fault model
//
// A connection cut anywhere before the end marker reads, on the receiving
// side, as an error (never as a short stream the pool might take for the
// whole), and the pool's Receive is all or nothing, so the receiver keeps
// nothing of a cut stream. The sender reports an error wrapping
// ErrInterrupted and ships the stream again later; a receiver that got the
// stream but whose answer was lost answers ok to the retry without reading it.
// A receiver that cannot be dialled is an error wrapping chain.ErrUnreachable;
// a certificate not signed by the configured CAs is ErrHandshake. Silence is
// bounded on both ends: the handshake and header by a timeout, every read
// and write mid-stream by an idle timeout, the answer by its own.
//
// Tokens travel only inside the TLS session: no log line, error or answer
// carries one.
package stream
