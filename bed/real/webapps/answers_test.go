package webapps

import (
	"encoding/json"
	"testing"
)

// The decoders take what a server answered, which may be anything: each
// must return a value that passes its own checks, or an error -- never
// panic.

func FuzzDecodeWordPressItem(f *testing.F) {
	f.Add([]byte(`{"id":7,"slug":"baton-wp-1-000001","title":{"raw":"baton-wp-1-000001","rendered":"x"},"content":{"raw":"abc"}}`), false)
	f.Add([]byte(`{"id":9,"title":{"raw":"k"},"source_url":"http://10.0.0.1/wp-content/uploads/2026/12/k.png"}`), true)
	f.Add([]byte(`{"code":"rest_cannot_create","message":"Sorry","data":{"status":401}}`), false)
	f.Add([]byte(`[]`), true)
	f.Fuzz(func(t *testing.T, body []byte, media bool) {
		p, err := decodeWordPressItem(body, media)
		if err != nil {
			return
		}
		if p.ID <= 0 || p.Title.Raw == nil || (!media && p.Content.Raw == nil) || (media && p.SourceURL == "") {
			t.Fatalf("accepted %q as %+v", body, p)
		}
	})
}

func FuzzDecodeWordPressList(f *testing.F) {
	f.Add([]byte(`[{"id":1,"title":{"raw":"a"},"content":{"raw":"b"}},{"id":2,"title":{"raw":"c"},"content":{"raw":""}}]`), false)
	f.Add([]byte(`[{"id":1,"title":{"raw":"a"}}]`), true)
	f.Add([]byte(`{"id":1}`), false)
	f.Fuzz(func(t *testing.T, body []byte, media bool) {
		list, err := decodeWordPressList(body, media)
		if err != nil {
			return
		}
		for _, p := range list {
			if p.check(media) != nil {
				t.Fatalf("accepted %q holding %+v", body, p)
			}
		}
	})
}

func FuzzParseTotalPages(f *testing.F) {
	for _, s := range []string{"1", "0", " 12 ", "-1", "99999999999999999999", "", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseTotalPages(s)
		if err == nil && (n < 0 || n > maxPages) {
			t.Fatalf("parseTotalPages(%q) = %d", s, n)
		}
	})
}

func FuzzSitePath(f *testing.F) {
	for _, s := range []string{"http://h/wp-content/uploads/2026/12/a.png", "/x", "", "::", "http://h", "http://h/a%20b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := sitePath(s)
		if err == nil && (p == "" || p[0] != '/') {
			t.Fatalf("sitePath(%q) = %q", s, p)
		}
	})
}

func FuzzDecodeGitea(f *testing.F) {
	f.Add([]byte(`{"sha1":"0123456789abcdef0123456789abcdef01234567"}`))
	f.Add([]byte(`{"content":{"path":"baton/a.txt","sha":"0123456789abcdef0123456789abcdef01234567"},"commit":{"sha":"89abcdef0123456789abcdef0123456789abcdef"}}`))
	f.Add([]byte(`[{"sha":"0123456789abcdef0123456789abcdef01234567","commit":{"message":"baton-g-1-000001\n"}}]`))
	f.Add([]byte(`{"number":3,"title":"t","body":"b"}`))
	f.Add([]byte(`[{"number":3,"title":"t","body":"b"}]`))
	f.Add([]byte(`{"message":"token is required"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if token, err := decodeGiteaToken(body); err == nil && len(token) < 20 {
			t.Fatalf("token %q from %q", token, body)
		}
		if file, err := decodeGiteaFile(body); err == nil && (!isObjectName(file.Content.SHA) || !isObjectName(file.Commit.SHA)) {
			t.Fatalf("file answer %+v from %q", file, body)
		}
		if commits, err := decodeGiteaCommits(body); err == nil {
			for _, c := range commits {
				if !isObjectName(c.SHA) {
					t.Fatalf("commit %+v from %q", c, body)
				}
				_ = c.subject()
			}
		}
		if issue, err := decodeGiteaIssue(body); err == nil && issue.Number <= 0 {
			t.Fatalf("issue %+v from %q", issue, body)
		}
		if issues, err := decodeGiteaIssues(body); err == nil {
			for _, i := range issues {
				if i.Number <= 0 {
					t.Fatalf("issue %+v from %q", i, body)
				}
			}
		}
	})
}

// TestDecodersReadRealAnswers checks the decoders against answers shaped
// as the applications send them (the real-application tests check them
// against the applications themselves).
func TestDecodersReadRealAnswers(t *testing.T) {
	raw := "baton-wp-1-000001"
	post, _ := json.Marshal(map[string]any{"id": 12, "slug": raw, "title": map[string]any{"raw": raw, "rendered": raw},
		"content": map[string]any{"raw": "body", "rendered": "<p>body</p>\n", "protected": false}})
	p, err := decodeWordPressItem(post, false)
	if err != nil || p.ID != 12 || *p.Content.Raw != "body" {
		t.Fatalf("post: %+v, %v", p, err)
	}
	if _, err := decodeWordPressItem(post, true); err == nil {
		t.Fatal("a post without source_url was taken for a media item")
	}
	commits := `[{"sha":"0123456789abcdef0123456789abcdef01234567","commit":{"message":"baton-g-1-000002\n\nmore"}}]`
	list, err := decodeGiteaCommits([]byte(commits))
	if err != nil || len(list) != 1 || list[0].subject() != "baton-g-1-000002" {
		t.Fatalf("commits: %+v, %v", list, err)
	}
	if _, err := decodeGiteaCommits([]byte(`[{"sha":"main"}]`)); err == nil {
		t.Fatal("a commit named main was accepted")
	}
	if got := gitBlobSHA([]byte("hello\n")); got != "ce013625030ba8dba906f756967f9e9ca394464a" {
		t.Fatalf("git blob of hello: %s", got)
	}
}
