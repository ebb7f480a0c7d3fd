package storageapi

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"time"

	"github.com/baton-dr/baton/storage/chain"
)

// DefaultCallTimeout bounds one call when ClientConfig leaves it unset.
const DefaultCallTimeout = 10 * time.Second

// maxAnswerBytes bounds what the client reads of an answer.
const maxAnswerBytes = 16 << 20

// ClientConfig says how to reach one cluster's storage API.
type ClientConfig struct {
	ID       chain.ClusterID
	Endpoint string // https://host[:port][/prefix]
	Secret   string
	// TLS verifies the server (RootCAs); nil uses the system roots.
	TLS *tls.Config
	// CallTimeout bounds each call; zero is DefaultCallTimeout.
	CallTimeout time.Duration
	// BriefTimeout bounds each call for SilenceWindow after one that got no
	// answer within CallTimeout (silence.go); zero is DefaultBriefTimeout,
	// negative keeps every call at CallTimeout.
	BriefTimeout time.Duration
	// SilenceWindow: zero is DefaultSilenceWindow.
	SilenceWindow time.Duration
	// Dial, when set, opens the TCP connections (a proxy, or a test that
	// partitions sites); nil dials directly.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// Client is a Cluster spoken over HTTPS, with API's methods. A call that does not reach the server
// (refused, reset, timed out, an answer that is not the API's) fails with an
// error wrapping chain.ErrUnreachable; an answer of the server wraps the
// sentinel its problem document names. A server whose certificate does not
// verify is a configuration error, not an unreachable cluster: resolution must
// fail loudly rather than skip the cluster.
type Client struct {
	API
	id       chain.ClusterID
	base     *url.URL
	secret   string
	timeout  time.Duration
	silence  *silence
	http     *http.Client
	endpoint string
}

var _ Cluster = (*Client)(nil)

// NewClient checks config and returns its client. Only https endpoints are
// accepted: the bearer token is the cluster's secret.
func NewClient(config ClientConfig) (*Client, error) {
	base, err := checkEndpoint(config.Endpoint)
	if err != nil {
		return nil, err
	}
	if config.Secret == "" {
		return nil, fmt.Errorf("storage API client for %s: no secret", config.ID)
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if config.TLS != nil {
		tlsConfig = config.TLS.Clone()
	}
	timeout := config.CallTimeout
	if timeout <= 0 {
		timeout = DefaultCallTimeout
	}
	quiet := &silence{brief: config.BriefTimeout, window: config.SilenceWindow, now: time.Now}
	if quiet.brief == 0 {
		quiet.brief = DefaultBriefTimeout
	}
	if quiet.window <= 0 {
		quiet.window = DefaultSilenceWindow
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = tlsConfig
	transport.Proxy = nil
	if config.Dial != nil {
		transport.DialContext = config.Dial
	}
	// A partition that drops packets leaves the HTTP/2 connection open and
	// stalled, and every call after it is multiplexed onto it -- a stream that
	// timed out holds only one of the server's ~250 stream slots -- and fails,
	// long after the heal, until TCP's backed-off retransmission gets through
	// (on the real bed, for a minute). A connection nothing was read from for
	// a whole call timeout is pinged, and closed unless the ping is answered
	// within the brief timeout, so that the calls after it dial anew. Not
	// sooner: a call to a silent cluster still ends at its own deadline,
	// which is what opens the silence.
	ping := quiet.brief
	if ping <= 0 {
		ping = DefaultBriefTimeout
	}
	transport.HTTP2 = &http.HTTP2Config{SendPingTimeout: timeout, PingTimeout: ping}
	c := &Client{id: config.ID, base: base, secret: config.Secret, timeout: timeout, silence: quiet, endpoint: config.Endpoint,
		http: &http.Client{Transport: transport,
			// A redirect would carry the secret elsewhere.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	c.API = API{c}
	return c, nil
}

// Close releases idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

func (c *Client) ID() chain.ClusterID { return c.id }

// call sends one request and decodes the answer into out (nil: none expected).
func (c *Client) call(caller context.Context, method, path string, in, out any) error {
	timeout, brief := c.silence.timeout(c.timeout)
	ctx, cancel := context.WithTimeout(caller, c.timeout)
	defer cancel()
	if brief {
		var stop func()
		ctx, stop = c.briefly(ctx, timeout)
		defer stop()
	}
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("failed to encode %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(data)
	}
	u := c.base.JoinPath(path)
	if i := indexQuery(path); i >= 0 {
		u = c.base.JoinPath(path[:i])
		u.RawQuery = path[i+1:]
	}
	request, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return fmt.Errorf("failed to build %s %s: %w", method, path, err)
	}
	request.Header.Set("Authorization", "Bearer "+c.secret)
	request.Header.Set("Accept", "application/json, "+problemType)
	if in != nil {
		request.Header.Set("Content-Type", "application/json")
	}
	response, err := c.http.Do(request)
	if err != nil {
		// Only the call's own deadline says the cluster was silent: the
		// caller's running out says nothing of it.
		// A brief call that heard the cluster's handshake had its full
		// timeout: its miss is a full one.
		cut := errors.Is(context.Cause(ctx), errBriefTimeout)
		if caller.Err() == nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			c.silence.missed(cut)
		}
		if !cut {
			timeout = c.timeout
		}
		return c.transportError(method, path, err, timeout, cut)
	}
	defer response.Body.Close()
	c.silence.heard()
	data, err := io.ReadAll(io.LimitReader(response.Body, maxAnswerBytes))
	if err != nil {
		return fmt.Errorf("cluster %s: %s %s: %w: reading the answer: %w", c.id, method, path, chain.ErrUnreachable, err)
	}
	return c.decode(method, path, response, data, out)
}

// briefly bounds a call to a silent cluster by the brief timeout for as long
// as the cluster stays silent: a TLS handshake the call completes shows it is
// there -- after a partition heals, the transport dials anew -- and from then
// on the call has its full timeout, and the silence is over: a peer that
// answers slower than the brief timeout once it can be reached (a
// fail-back's Resync makes it ask the returning site in turn) is not failed
// by it.
func (c *Client) briefly(ctx context.Context, brief time.Duration) (context.Context, func()) {
	ctx, shorten := context.WithCancelCause(ctx)
	timer := time.AfterFunc(brief, func() { shorten(errBriefTimeout) })
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			TLSHandshakeDone: func(_ tls.ConnectionState, err error) {
				if err == nil && timer.Stop() {
					c.silence.heard()
				}
			},
		}), func() {
			timer.Stop()
			shorten(nil)
		}
}

// errBriefTimeout is the cause of a brief call's end.
var errBriefTimeout = fmt.Errorf("the brief timeout: %w", context.DeadlineExceeded)

func (c *Client) transportError(method, path string, err error, timeout time.Duration, brief bool) error {
	var verify *tls.CertificateVerificationError
	var authority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	if errors.As(err, &verify) || errors.As(err, &authority) || errors.As(err, &hostname) {
		return fmt.Errorf("cluster %s at %s: %s %s: the server's certificate does not verify: %w", c.id, c.endpoint, method, path, err)
	}
	if brief {
		err = fmt.Errorf("asked for %s only, silent since %s: %w", timeout,
			c.silence.began().UTC().Format(time.RFC3339), err)
	}
	return fmt.Errorf("cluster %s at %s: %s %s: %w: %w", c.id, c.endpoint, method, path, chain.ErrUnreachable, err)
}

func (c *Client) decode(method, path string, response *http.Response, data []byte, out any) error {
	if err := AnswerError(c.id, method, path, response.StatusCode, response.Header.Get("Content-Type"), data); err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("cluster %s: %s %s: %w: undecodable answer: %w", c.id, method, path, ErrInternal, err)
	}
	return nil
}

// AnswerError is the error Client returns for an answer of status with a
// Content-Type and a body, or nil for a success. The simulation fails calls
// through it, so that they fail as the client would see them.
func AnswerError(id chain.ClusterID, method, path string, status int, contentType string, body []byte) error {
	mediaType, _, _ := mime.ParseMediaType(contentType)
	switch {
	case status >= 400 && mediaType == problemType:
		var p Problem
		if err := json.Unmarshal(body, &p); err != nil || p.Kind == "" {
			return fmt.Errorf("cluster %s: %s %s: %w: a malformed problem document (%d)", id, method, path, ErrInternal, status)
		}
		return fmt.Errorf("cluster %s: %w", id, errorOf(p))
	case status >= 500:
		// Not the API's answer: a proxy or load balancer in between.
		return fmt.Errorf("cluster %s: %s %s: %w: %d %s", id, method, path, chain.ErrUnreachable, status, http.StatusText(status))
	case status >= 300:
		return fmt.Errorf("cluster %s: %s %s: %w: unexpected %d %s", id, method, path, ErrInternal, status, http.StatusText(status))
	}
	return nil
}

func indexQuery(path string) int { return bytes.IndexByte([]byte(path), '?') }

// Carry sends op's request and decodes its answer.
func (c *Client) Carry(ctx context.Context, op Operation, request any) (any, error) {
	return op.send(ctx, c, request)
}

// checkEndpoint accepts an https URL with a host and nothing a bearer token
// should not travel with (user info, query, fragment).
func checkEndpoint(endpoint string) (*url.URL, error) {
	u, err := url.Parse(endpoint)
	switch {
	case err != nil:
		return nil, fmt.Errorf("endpoint %q is not a URL", clip(endpoint, 100))
	case u.Scheme != "https":
		return nil, fmt.Errorf("endpoint %q must be https: the bearer token is a cluster secret", clip(endpoint, 100))
	case u.Host == "" || u.Hostname() == "":
		return nil, fmt.Errorf("endpoint %q has no host", clip(endpoint, 100))
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		return nil, fmt.Errorf("endpoint of host %q may carry no user info, query or fragment", clip(u.Host, 100))
	}
	return u, nil
}
