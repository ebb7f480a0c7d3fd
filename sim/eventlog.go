package sim

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Logf appends one line to the event log: "<seconds since epoch> <kind> <text>",
// e.g. "12.500000000 net.partition site-a->site-b". The kind is one word
// (no spaces); newlines in the text are escaped so a line stays a line. The line
// feeds the run's hash and, with WithTrace, the trace.
func (w *World) Logf(kind string, format string, args ...any) {
	if kind == "" || strings.ContainsAny(kind, " \t\r\n") {
		panic(fmt.Sprintf("sim: log kind %q must be one word", kind))
	}
	b, textStart := w.startLine(kind)
	b = fmt.Appendf(b, format, args...)
	w.endLine(b, textStart)
}

// logEvent records an executed event; it skips fmt because it runs per event.
func (w *World) logEvent(label string) {
	b, textStart := w.startLine("event")
	b = append(b, label...)
	w.endLine(b, textStart)
}

// Hash identifies the run so far: the hex SHA-256 of every event-log line, equal
// to the sha256sum of the trace. Same seed and same code give the same hash.
func (w *World) Hash() string { return hex.EncodeToString(w.log.Sum(nil)) }

// TraceErr is the first error the trace writer returned, if any. The hash does
// not depend on the trace, so a failed trace only loses the transcript.
func (w *World) TraceErr() error { return w.traceErr }

func (w *World) startLine(kind string) ([]byte, int) {
	b := appendOffset(w.line[:0], w.now)
	b = append(b, ' ')
	b = append(b, kind...)
	b = append(b, ' ')
	return b, len(b)
}

func (w *World) endLine(b []byte, textStart int) {
	if bytes.ContainsAny(b[textStart:], "\r\n") {
		text := strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(string(b[textStart:]))
		b = append(b[:textStart], text...)
	}
	b = append(b, '\n')
	w.log.Write(b) // a hash.Hash never returns an error
	if w.trace != nil && w.traceErr == nil {
		if _, err := w.trace.Write(b); err != nil {
			w.traceErr = fmt.Errorf("failed to write the sim trace: %w", err)
		}
	}
	w.line = b[:0]
}

// appendOffset writes d as seconds with nine decimals ("12.500000000"): fixed
// precision, so the same instant always prints the same bytes.
func appendOffset(b []byte, d time.Duration) []byte {
	seconds, nanos := int64(d/time.Second), int64(d%time.Second)
	b = strconv.AppendInt(b, seconds, 10)
	b = append(b, '.')
	var digits [9]byte
	for i := len(digits) - 1; i >= 0; i-- {
		digits[i] = byte('0' + nanos%10)
		nanos /= 10
	}
	return append(b, digits[:]...)
}
