package webapps

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/baton-dr/baton/internal/poll"
)

// ErrUnavailable: the application did not answer, or answered 5xx, for
// longer than the limit. Test with errors.Is.
var ErrUnavailable = errors.New("application unavailable")

// maxAnswerBytes bounds what one answer may hold; a media file of the
// driver's is a few KiB and a listing page of 100 posts well under 1 MiB.
const maxAnswerBytes = 16 << 20

// requestTimeout bounds one call; an answer later than this is lost, and the
// operation's outcome Unknown.
const requestTimeout = 30 * time.Second

// endpoint is one application's HTTP API: its base URL and how a request
// authenticates.
type endpoint struct {
	base   *url.URL
	client *http.Client
	auth   func(*http.Request)
}

func newEndpoint(raw string, client *http.Client) (endpoint, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return endpoint{}, fmt.Errorf("application URL %q: want http(s)://host[:port]", raw)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	if client == nil {
		client = &http.Client{Timeout: requestTimeout}
	}
	return endpoint{base: u, client: client, auth: func(*http.Request) {}}, nil
}

// answer is an HTTP answer, its body read whole.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) ok() bool { return a.status >= 200 && a.status < 300 }

// errorf describes an answer that is not what the caller wanted, with the
// start of its body (never a request's credentials).
func (a answer) errorf(what string) error {
	body := a.body
	if len(body) > 200 {
		body = body[:200]
	}
	return fmt.Errorf("%s: HTTP %d: %s", what, a.status, bytes.TrimSpace(body))
}

// request is one call: the path under the base URL (already escaped), the
// query, the body and its headers.
type request struct {
	method string
	path   string
	query  url.Values
	body   []byte
	header map[string]string
	noAuth bool
	// auth, when set, authenticates this request instead of the endpoint's.
	auth func(*http.Request)
}

// call sends one request and reads the whole answer. An error means no
// answer came (refused connection, timeout, reset), or its body could not be
// read: the call's effect is unknown.
func (e endpoint) call(ctx context.Context, r request) (answer, error) {
	u := *e.base
	u.Path = e.base.Path + r.path
	u.RawPath = e.base.EscapedPath() + r.path
	u.RawQuery = r.query.Encode()
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u.String(), body)
	if err != nil {
		return answer{}, fmt.Errorf("failed to build %s %s: %w", r.method, r.path, err)
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	switch {
	case r.auth != nil:
		r.auth(req)
	case !r.noAuth:
		e.auth(req)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: %w", r.method, r.path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: reading the answer: %w", r.method, r.path, err)
	}
	if len(data) > maxAnswerBytes {
		return answer{}, fmt.Errorf("%s %s: answer larger than %d bytes", r.method, r.path, maxAnswerBytes)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: data}, nil
}

// outcomeOf classifies the answer to a write. A 4xx is a refusal (the
// application checked the request and did nothing), except 408 and 429, which
// a proxy or an overloaded server may answer with the request in flight; a 5xx
// or no answer leaves the outcome unknown.
func outcomeOf(a answer, err error) Outcome {
	switch {
	case err != nil:
		return Unknown
	case a.ok():
		return Acknowledged
	case a.status == http.StatusRequestTimeout || a.status == http.StatusTooManyRequests:
		return Unknown
	case a.status >= 400 && a.status < 500:
		return Refused
	}
	return Unknown
}

// readRetries bounds the attempts of one read-back call: reads are
// idempotent, so a transient error or 5xx is retried.
const readRetries = 5

// read performs a read-back call, retrying transient failures, and returns a
// 2xx answer or statuses listed in also (a 404 the caller expects, say).
func (e endpoint) read(ctx context.Context, r request, also ...int) (answer, error) {
	var last error
	for attempt := 0; attempt < readRetries; attempt++ {
		if attempt > 0 {
			if err := poll.Pause(ctx, time.Duration(attempt)*500*time.Millisecond); err != nil {
				return answer{}, err
			}
		}
		a, err := e.call(ctx, r)
		switch {
		case err != nil:
			last = err
			continue
		case a.ok():
			return a, nil
		case contains(also, a.status):
			return a, nil
		case a.status >= 500 || a.status == http.StatusTooManyRequests:
			last = a.errorf(r.method + " " + r.path)
			continue
		}
		return a, a.errorf(r.method + " " + r.path)
	}
	return answer{}, fmt.Errorf("%w: %v", ErrUnavailable, last)
}

// readers is how many read-back calls readEach has in flight at once. The
// reads of one object each (a file at a commit, a media file) are
// independent, and one after another they were most of a read-back's time;
// four keep both of a small host's cores busy without crowding the
// application out.
const readers = 4

// readEach performs the reads rs, up to readers at a time, and returns their
// answers in rs's order; the first that fails ends it, with its error.
func (e endpoint) readEach(ctx context.Context, rs []request, also ...int) ([]answer, error) {
	answers := make([]answer, len(rs))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(readers)
	for i, r := range rs {
		g.Go(func() error {
			a, err := e.read(ctx, r, also...)
			answers[i] = a
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return answers, nil
}

func contains(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// escapePath escapes each segment of a slash-separated path.
func escapePath(p string) string {
	segments := strings.Split(p, "/")
	for i, s := range segments {
		segments[i] = url.PathEscape(s)
	}
	return strings.Join(segments, "/")
}
