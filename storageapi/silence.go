package storageapi

import (
	"sync"
	"time"
)

// A cluster that let a call run out its whole timeout is asked briefly for a
// while: a partitioned peer drops every packet, and each call of a
// resolution, an enable, a promotion and its forced retry would otherwise
// wait the full timeout for the same silence -- 10 s apiece, most of an
// unplanned fail-over's time. The verdict is the same (the peer is
// unreachable, chain.ErrUnreachable); only its cost changes. Silence is of
// the network, not of a slow server: a brief call that completes a TLS
// handshake with the cluster -- after a partition heals the transport dials
// anew -- has its full timeout from then on, and ends the silence, so a peer
// that takes longer than the brief timeout to answer (a fail-back's Resync
// asks the other site in turn) is not misjudged once it can be reached. A
// cluster that takes handshakes but never answers is asked with the full
// timeout each time; any answer ends the silence at once, and the first call
// after the window has the full timeout again.
const (
	// DefaultBriefTimeout bounds a call to a silent cluster: a peer on the
	// same network that answers at all answers within milliseconds.
	DefaultBriefTimeout = DefaultCallTimeout / 5
	// DefaultSilenceWindow is how long after a full-timeout silence calls
	// are brief.
	DefaultSilenceWindow = 30 * time.Second
)

// silence is what one client knows of its cluster's silence. It is safe for
// concurrent use: a client serves every RPC of a driver.
type silence struct {
	brief, window time.Duration
	now           func() time.Time

	mu    sync.Mutex
	until time.Time // calls before it are brief; zero: the cluster answers
	since time.Time // when the silence began
}

// timeout is the timeout of a call starting now whose full timeout is full,
// and whether it is the brief one.
func (s *silence) timeout(full time.Duration) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.brief <= 0 || s.brief >= full || !s.now().Before(s.until) {
		return full, false
	}
	return s.brief, true
}

// missed records that a call with its timeout (brief or not) got no answer
// within it. Only a full timeout opens a window: a brief call's miss does
// not prolong it, so that the window ends with a full call.
func (s *silence) missed(brief bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.since.IsZero() {
		s.since = now
	}
	if !brief {
		s.until = now.Add(s.window)
	}
}

// heard records an answer: the cluster is not silent.
func (s *silence) heard() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.until, s.since = time.Time{}, time.Time{}
}

// began tells when the silence began; zero when the cluster answers.
func (s *silence) began() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.since
}
