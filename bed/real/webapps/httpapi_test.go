package webapps

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestReadEachAnswersInOrderWithReadersInFlight: the answers come back in
// the order of the requests although the server answers the last of each
// group of readers first, and no more than readers are in flight at once --
// but more than one, which is the point.
func TestReadEachAnswersInOrderWithReadersInFlight(t *testing.T) {
	const n = 3 * readers
	var mu sync.Mutex
	inFlight, most := 0, 0
	arrived := make([]chan struct{}, n)
	for i := range arrived {
		arrived[i] = make(chan struct{})
	}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		if err != nil || i < 0 || i >= n {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		close(arrived[i])
		// The last of each group of readers answers first: the first of a
		// group waits until the whole group has arrived.
		if group := i / readers; i%readers != readers-1 {
			<-arrived[group*readers+readers-1]
		}
		mu.Lock()
		inFlight--
		mu.Unlock()
		w.Write([]byte("answer " + strconv.Itoa(i)))
	}))
	defer server.Close()
	e, err := newEndpoint(server.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	var rs []request
	for i := range n {
		rs = append(rs, request{method: "GET", path: "/" + strconv.Itoa(i)})
	}
	answers, err := e.readEach(context.Background(), rs)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range answers {
		if want := "answer " + strconv.Itoa(i); string(a.body) != want {
			t.Errorf("answer %d is %q, want %q", i, a.body, want)
		}
	}
	if most < 2 || most > readers {
		t.Errorf("%d reads were in flight at the most, want 2 to %d", most, readers)
	}
}

// TestReadEachFailsOnTheFirstRefusal: a read answered 403 (not a status the
// caller expects) fails them all, and nothing is returned as read.
func TestReadEachFailsOnTheFirstRefusal(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/gone":
			http.NotFound(w, r)
		case "/forbidden":
			http.Error(w, "no", http.StatusForbidden)
		default:
			w.Write([]byte("ok"))
		}
	}))
	defer server.Close()
	e, err := newEndpoint(server.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	answers, err := e.readEach(context.Background(), []request{{method: "GET", path: "/a"}, {method: "GET", path: "/gone"}}, 404)
	if err != nil || len(answers) != 2 || answers[1].status != 404 {
		t.Fatalf("an expected 404: %v, %+v", err, answers)
	}
	answers, err = e.readEach(context.Background(), []request{{method: "GET", path: "/a"}, {method: "GET", path: "/forbidden"}}, 404)
	if err == nil || !strings.Contains(err.Error(), "HTTP 403") || answers != nil {
		t.Fatalf("a 403: %v, %+v; want its error and no answers", err, answers)
	}
}
