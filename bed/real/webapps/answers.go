package webapps

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// The applications' JSON answers, decoded into the fields the driver reads
// and checked for the ones it needs. Each decoder is fuzzed (answers_test.go):
// an answer from a broken or foreign server is an error, never a panic.

// wpText is WordPress's rendered/raw pair; context=edit fills raw.
type wpText struct {
	Raw      *string `json:"raw"`
	Rendered string  `json:"rendered"`
}

// wpPost is a post or a media item as /wp/v2 answers it.
type wpPost struct {
	ID        int64  `json:"id"`
	Slug      string `json:"slug"`
	Title     wpText `json:"title"`
	Content   wpText `json:"content"`
	SourceURL string `json:"source_url"`
}

func (p wpPost) check(media bool) error {
	switch {
	case p.ID <= 0:
		return fmt.Errorf("no id")
	case p.Title.Raw == nil:
		return fmt.Errorf("post %d: no raw title (not context=edit?)", p.ID)
	case !media && p.Content.Raw == nil:
		return fmt.Errorf("post %d: no raw content (not context=edit?)", p.ID)
	case media && p.SourceURL == "":
		return fmt.Errorf("media %d: no source_url", p.ID)
	}
	return nil
}

func decodeWordPressItem(body []byte, media bool) (wpPost, error) {
	var p wpPost
	if err := json.Unmarshal(body, &p); err != nil {
		return wpPost{}, fmt.Errorf("decoding a WordPress answer: %w", err)
	}
	if err := p.check(media); err != nil {
		return wpPost{}, fmt.Errorf("WordPress answer: %w", err)
	}
	return p, nil
}

func decodeWordPressList(body []byte, media bool) ([]wpPost, error) {
	var list []wpPost
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("decoding a WordPress listing: %w", err)
	}
	for _, p := range list {
		if err := p.check(media); err != nil {
			return nil, fmt.Errorf("WordPress listing: %w", err)
		}
	}
	return list, nil
}

// maxPages bounds a listing: 10,000 pages of 100 posts is far beyond any run.
const maxPages = 10000

// parseTotalPages reads X-WP-TotalPages; WordPress sends it on every listing.
func parseTotalPages(v string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 || n > maxPages {
		return 0, fmt.Errorf("X-WP-TotalPages %q: want 0 to %d", v, maxPages)
	}
	return n, nil
}

// sitePath is the path of a WordPress URL (source_url names the host the
// request came in by, which another site's address may not reach).
func sitePath(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Path == "" || !strings.HasPrefix(u.Path, "/") {
		return "", fmt.Errorf("source_url %q: no path", raw)
	}
	return u.EscapedPath(), nil
}

// giteaToken is POST /users/{user}/tokens's answer.
type giteaToken struct {
	SHA1 string `json:"sha1"`
}

func decodeGiteaToken(body []byte) (string, error) {
	var t giteaToken
	if err := json.Unmarshal(body, &t); err != nil {
		return "", fmt.Errorf("decoding Gitea's token answer: %w", err)
	}
	if len(t.SHA1) < 20 || strings.ContainsAny(t.SHA1, " \r\n\t") {
		return "", fmt.Errorf("the token answer holds no token")
	}
	return t.SHA1, nil
}

// giteaFileAnswer is the contents API's answer to a create or an update.
type giteaFileAnswer struct {
	Content struct {
		Path string `json:"path"`
		SHA  string `json:"sha"`
	} `json:"content"`
	Commit struct {
		SHA string `json:"sha"`
	} `json:"commit"`
}

func decodeGiteaFile(body []byte) (giteaFileAnswer, error) {
	var f giteaFileAnswer
	if err := json.Unmarshal(body, &f); err != nil {
		return giteaFileAnswer{}, fmt.Errorf("decoding Gitea's contents answer: %w", err)
	}
	if !isObjectName(f.Content.SHA) || !isObjectName(f.Commit.SHA) {
		return giteaFileAnswer{}, fmt.Errorf("the contents answer lacks the blob or commit SHA")
	}
	return f, nil
}

// giteaCommit is one entry of GET /repos/{owner}/{repo}/commits.
type giteaCommit struct {
	SHA    string `json:"sha"`
	Commit struct {
		Message string `json:"message"`
	} `json:"commit"`
}

// subject is the commit message's first line: the operation's key.
func (c giteaCommit) subject() string {
	line, _, _ := strings.Cut(c.Commit.Message, "\n")
	return strings.TrimSpace(line)
}

func decodeGiteaCommits(body []byte) ([]giteaCommit, error) {
	var list []giteaCommit
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("decoding Gitea's commit listing: %w", err)
	}
	for _, c := range list {
		if !isObjectName(c.SHA) {
			return nil, fmt.Errorf("the commit listing: commit %q is no object name", c.SHA)
		}
	}
	return list, nil
}

// giteaIssue is an issue as Gitea answers it.
type giteaIssue struct {
	Number int64  `json:"number"`
	Title  string `json:"title"`
	Body   string `json:"body"`
}

func decodeGiteaIssue(body []byte) (giteaIssue, error) {
	var i giteaIssue
	if err := json.Unmarshal(body, &i); err != nil {
		return giteaIssue{}, fmt.Errorf("decoding Gitea's issue: %w", err)
	}
	if i.Number <= 0 {
		return giteaIssue{}, fmt.Errorf("the issue answer has no number")
	}
	return i, nil
}

func decodeGiteaIssues(body []byte) ([]giteaIssue, error) {
	var list []giteaIssue
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("decoding Gitea's issue listing: %w", err)
	}
	for _, i := range list {
		if i.Number <= 0 {
			return nil, fmt.Errorf("the issue listing: an issue has no number")
		}
	}
	return list, nil
}

// isObjectName: a git SHA-1 (40) or SHA-256 (64) object name in hex.
func isObjectName(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
