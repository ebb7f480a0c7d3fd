package webapps

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/baton-dr/baton/workload"
)

// WordPress drives a WordPress site through its REST API: three operations
// in four create a post (the database volume), one uploads a PNG (the
// uploads volume, and its attachment row in the database), as the workload
// model does. It authenticates with an application password.
type WordPress struct {
	client
}

var _ App = (*WordPress)(nil)

// wordPressHealth answers 200 once WordPress reaches its database.
const wordPressHealth = "/wp-json/"

// The sizes of the content: a post of 16 lines of 64 hex digits (about 1
// KiB), a 48x48 PNG (about 7 KiB).
const (
	postLines = 16
	mediaSide = 48
)

// NewWordPress returns a client of the WordPress site at c.URL; c.User and
// c.Password are an application password's user and password.
func NewWordPress(c Config) (*WordPress, error) {
	base, err := newClient(c)
	if err != nil {
		return nil, err
	}
	w := &WordPress{client: base}
	user, password := c.User, c.Password
	w.api.auth = func(r *http.Request) { r.SetBasicAuth(user, password) }
	return w, nil
}

// Volumes are the workload's: the database, then the uploads.
func (w *WordPress) Volumes() []string {
	return []string{workload.WordPressDatabase, workload.WordPressUploads}
}

// Setup waits for the site and checks the application password.
func (w *WordPress) Setup(ctx context.Context, limit time.Duration) error {
	if err := w.api.waitReady(ctx, wordPressHealth, limit); err != nil {
		return err
	}
	if _, err := w.api.read(ctx, request{method: "GET", path: "/wp-json/wp/v2/users/me", query: url.Values{"context": {"edit"}}}); err != nil {
		return fmt.Errorf("%s: the application password does not authenticate: %w", w.name, err)
	}
	return nil
}

// Step creates a post or uploads a file.
func (w *WordPress) Step(ctx context.Context) (Write, error) {
	if w.rng.IntN(4) == 0 {
		return w.upload(ctx)
	}
	return w.post(ctx)
}

func (w *WordPress) post(ctx context.Context) (Write, error) {
	key := w.nextKey()
	content := textContent(w.rng, key, postLines)
	body, err := json.Marshal(map[string]string{"title": key, "slug": key, "status": "publish", "content": string(content)})
	if err != nil {
		panic(fmt.Sprintf("webapps: encoding a post: %v", err))
	}
	write := Write{Key: key, Operation: OpPost, Parts: []Part{
		{Volume: workload.WordPressDatabase, SHA256: sha256Hex(content), Bytes: len(content)},
	}}
	return w.perform(ctx, write, request{
		method: "POST", path: "/wp-json/wp/v2/posts", body: body,
		header: map[string]string{"Content-Type": "application/json"},
	}, func(a answer) (string, string, error) {
		p, err := decodeWordPressItem(a.body, false)
		if err != nil {
			return "", "", err
		}
		return strconv.FormatInt(p.ID, 10), "", nil
	})
}

// upload sends a PNG as the request's body, its title the key: the media
// item's row holds the title (the database part), its file the bytes (the
// uploads part).
func (w *WordPress) upload(ctx context.Context) (Write, error) {
	key := w.nextKey()
	content := pngContent(w.rng, mediaSide)
	write := Write{Key: key, Operation: OpMedia, Parts: []Part{
		{Volume: workload.WordPressDatabase, SHA256: sha256Hex([]byte(key)), Bytes: len(key)},
		{Volume: workload.WordPressUploads, SHA256: sha256Hex(content), Bytes: len(content)},
	}}
	return w.perform(ctx, write, request{
		method: "POST", path: "/wp-json/wp/v2/media", query: url.Values{"title": {key}}, body: content,
		header: map[string]string{
			"Content-Type":        "image/png",
			"Content-Disposition": fmt.Sprintf("attachment; filename=%q", key+".png"),
		},
	}, func(a answer) (string, string, error) {
		p, err := decodeWordPressItem(a.body, true)
		if err != nil {
			return "", "", err
		}
		path, err := sitePath(p.SourceURL)
		return strconv.FormatInt(p.ID, 10), path, err
	})
}

// ReadBack lists every post and every media item, and fetches each media
// item's file.
func (w *WordPress) ReadBack(ctx context.Context, recoveryPoint time.Time, limit time.Duration) (Verdict, error) {
	return w.readBack(ctx, w.Volumes(), wordPressHealth, recoveryPoint, limit, w.gather)
}

func (w *WordPress) gather(ctx context.Context, obs *Observation) error {
	posts, err := w.list(ctx, "/wp-json/wp/v2/posts", false)
	if err != nil {
		return err
	}
	for _, p := range posts {
		if title := *p.Title.Raw; w.keys.ours(title) {
			obs.Add(workload.WordPressDatabase, title, sha256Hex([]byte(*p.Content.Raw)), strconv.FormatInt(p.ID, 10))
		}
	}
	media, err := w.list(ctx, "/wp-json/wp/v2/media", true)
	if err != nil {
		return err
	}
	files := map[string]string{} // key -> the file's path, as the row names it
	for _, m := range media {
		title := *m.Title.Raw
		if !w.keys.ours(title) {
			continue
		}
		obs.Add(workload.WordPressDatabase, title, sha256Hex([]byte(title)), strconv.FormatInt(m.ID, 10))
		if path, err := sitePath(m.SourceURL); err == nil {
			files[title] = path
		}
	}
	return w.gatherFiles(ctx, obs, files)
}

// gatherFiles fetches the file of every media operation: where its row says,
// or, when the row is gone, where the acknowledgement said -- so a file whose
// row the database lost is still found, and one the uploads lost is missed.
func (w *WordPress) gatherFiles(ctx context.Context, obs *Observation, files map[string]string) error {
	var keys []string
	var reads []request
	for _, op := range w.journal.Writes() {
		if op.Operation != OpMedia {
			continue
		}
		path, ok := files[op.Key]
		if !ok {
			path = op.Path
		}
		if path == "" {
			continue
		}
		keys = append(keys, op.Key)
		reads = append(reads, request{method: "GET", path: path, noAuth: true})
	}
	answers, err := w.api.readEach(ctx, reads, 404)
	if err != nil {
		return err
	}
	for i, a := range answers {
		if a.status != 404 {
			obs.Add(workload.WordPressUploads, keys[i], sha256Hex(a.body), reads[i].path)
		}
	}
	return nil
}

// list pages through a collection, 100 at a time, in every status.
func (w *WordPress) list(ctx context.Context, path string, media bool) ([]wpPost, error) {
	var all []wpPost
	for page, pages := 1, 1; page <= pages; page++ {
		q := url.Values{"context": {"edit"}, "per_page": {"100"}, "page": {strconv.Itoa(page)}, "orderby": {"id"}, "order": {"asc"}}
		if media {
			q.Set("status", "inherit,private,trash")
		} else {
			q.Set("status", "publish,future,draft,pending,private,trash")
		}
		a, err := w.api.read(ctx, request{method: "GET", path: path, query: q})
		if err != nil {
			return nil, err
		}
		if pages, err = parseTotalPages(a.header.Get("X-WP-TotalPages")); err != nil {
			return nil, fmt.Errorf("GET %s: %w", path, err)
		}
		list, err := decodeWordPressList(a.body, media)
		if err != nil {
			return nil, fmt.Errorf("GET %s page %d: %w", path, page, err)
		}
		all = append(all, list...)
	}
	return all, nil
}
