package storageapi

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

const answerCluster chain.ClusterID = "a0a0a0a0-0000-4000-8000-000000000001"

// answerCase is an answer a cluster gives and the sentinel it decodes to.
type answerCase struct {
	what        string
	status      int
	contentType string
	body        []byte
	want        error
}

// TestAnswersMapToTheirSentinels: what a proxy answers (a bare 5xx) is an
// unreachable cluster, a bare 4xx is the API's own failure, and a problem
// document the server wrote names its sentinel, whatever the status.
func TestAnswersMapToTheirSentinels(t *testing.T) {
	problem := func(err error) (int, string, []byte) { return ProblemAnswer(err) }
	cases := []answerCase{
		{"a proxy's 503", http.StatusServiceUnavailable, "text/plain", []byte("upstream connect error"), chain.ErrUnreachable},
		{"a proxy's 502", http.StatusBadGateway, "text/html", nil, chain.ErrUnreachable},
		{"a bare 429", http.StatusTooManyRequests, "text/plain", nil, ErrInternal},
	}
	for _, sentinel := range []error{core.ErrConflict, core.ErrNotFound, ErrInternal, core.ErrNoCapacity} {
		status, contentType, body := problem(fmt.Errorf("wrapped: %w", sentinel))
		cases = append(cases, answerCase{"the server's " + sentinel.Error(), status, contentType, body, sentinel})
	}
	status, contentType, body := problem(errors.New("no sentinel"))
	if status != http.StatusInternalServerError {
		t.Fatalf("an error without a sentinel is answered %d", status)
	}
	cases = append(cases, answerCase{"the server's internal error", status, contentType, body, ErrInternal})
	for _, c := range cases {
		err := AnswerError(answerCluster, "GET", "/v1/volumes", c.status, c.contentType, c.body)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.what, err, c.want)
		}
	}
	if err := AnswerError(answerCluster, "GET", "/v1/volumes", http.StatusOK, "application/json", []byte("{}")); err != nil {
		t.Errorf("a 200: %v", err)
	}
}

// FuzzAnswerError: any answer decodes without a panic, a success to nil and
// anything else to an error.
func FuzzAnswerError(f *testing.F) {
	f.Add(200, "application/json", []byte(`{}`))
	f.Add(503, "text/plain", []byte("upstream connect error"))
	f.Add(429, "text/plain; charset=utf-8", []byte(""))
	f.Add(409, problemType, []byte(`{"kind":"conflict","status":409}`))
	f.Add(500, problemType, []byte(`{"kind":`))
	f.Add(404, problemType+"; charset=utf-8", []byte(`{"kind":"nonsense"}`))
	f.Fuzz(func(t *testing.T, status int, contentType string, body []byte) {
		err := AnswerError(answerCluster, "POST", "/v1/volumes", status, contentType, body)
		if (status >= 300) != (err != nil) {
			t.Fatalf("status %d answered %v", status, err)
		}
	})
}
