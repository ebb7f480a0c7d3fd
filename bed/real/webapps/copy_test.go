package webapps

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// headers records the Authorization header of every request it answers.
type headers struct {
	mu   sync.Mutex
	seen []string
}

func (h *headers) server(t *testing.T) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.seen = append(h.seen, r.Header.Get("Authorization"))
		h.mu.Unlock()
	}))
	t.Cleanup(s.Close)
	return s
}

func (h *headers) last() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.seen) == 0 {
		return ""
	}
	return h.seen[len(h.seen)-1]
}

// A drill's copy of Gitea is read back while the original goes on writing:
// the copy judges against the journal as it was, the original's operations
// after it are not the copy's, and a token the copy makes (its database may
// have lost the original's) authenticates the copy alone.
func TestCopyReadsBackApartFromTheOriginal(t *testing.T) {
	var atOriginal, atCopy headers
	original, err := NewGitea(Config{Name: "gitea", URL: atOriginal.server(t).URL, User: "admin", Password: "p4ssw0rd-long-enough", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	original.token = "original"
	original.files["a"], original.filePaths = "blob", []string{"a"}
	first := original.Journal().Begin(Write{Key: original.nextKey(), Operation: OpPost, Parts: []Part{{Volume: "db", SHA256: "x", Bytes: 1}}})
	original.Journal().Finish(first, Acknowledged, original.now(), "1", "")

	app, err := Copy(original, atCopy.server(t).URL)
	if err != nil {
		t.Fatal(err)
	}
	c := app.(*Gitea)
	original.Journal().Begin(Write{Key: original.nextKey(), Operation: OpPost, Parts: []Part{{Volume: "db", SHA256: "y", Bytes: 1}}})
	original.remember("b", "blob-b")
	c.token = "copy"

	if n := c.Journal().Len(); n != 1 {
		t.Errorf("the copy's journal holds %d operations, want the 1 made before the copy", n)
	}
	if w, ok := c.Journal().Lookup(original.keys.key(1)); !ok || w.Outcome != Acknowledged || !c.keys.ours(w.Key) {
		t.Errorf("the copy does not know the original's first operation as its own: %+v, %v", w, ok)
	}
	if len(c.filePaths) != 1 || len(c.files) != 1 {
		t.Errorf("the copy's files changed with the original's: %v %v", c.files, c.filePaths)
	}
	ctx := context.Background()
	if _, err := c.api.call(ctx, request{method: "GET", path: "/api/v1/user"}); err != nil {
		t.Fatal(err)
	}
	if _, err := original.api.call(ctx, request{method: "GET", path: "/api/v1/user"}); err != nil {
		t.Fatal(err)
	}
	if got := atCopy.last(); got != "token copy" {
		t.Errorf("the copy authenticates with %q, want its own token", got)
	}
	if got := atOriginal.last(); got != "token original" {
		t.Errorf("the original authenticates with %q after the copy made a token, want its own", got)
	}
}

// A WordPress copy keeps the application password and answers at its own
// address.
func TestCopyOfWordPressAuthenticatesAtItsAddress(t *testing.T) {
	var atOriginal, atCopy headers
	original, err := NewWordPress(Config{Name: "wordpress", URL: atOriginal.server(t).URL, User: "admin", Password: "app-password", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	app, err := Copy(original, atCopy.server(t).URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.(*WordPress).api.call(context.Background(), request{method: "GET", path: "/wp-json/"}); err != nil {
		t.Fatal(err)
	}
	if atCopy.last() == "" || len(atOriginal.seen) != 0 {
		t.Errorf("the copy's call reached the original (%d calls) or carried no password (%q)", len(atOriginal.seen), atCopy.last())
	}
	if _, err := Copy(nil, atCopy.server(t).URL); err == nil {
		t.Error("a copy of no application was made")
	}
}
