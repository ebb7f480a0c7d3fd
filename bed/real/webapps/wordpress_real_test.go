package webapps

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The test's credentials; the entrypoints accept letters and digits.
const (
	testDatabasePassword = "databasepassword1"
	testAdminPassword    = "adminpassword1234"
	testAppPassword      = "applicationpassword12345"
)

// wordPressBed is WordPress's two containers, as the manifests run them:
// MariaDB with its datadir on one directory, apache2/mod_php with the
// uploads on another.
type wordPressBed struct {
	*dockerBed
	db, web string
}

// runWordPress starts one site's MariaDB (db-SITE) and WordPress (web-SITE)
// on the directories mysql and uploads.
func (d *dockerBed) runWordPress(site, mysql, uploads string) *wordPressBed {
	b := &wordPressBed{dockerBed: d}
	b.db = d.run(container{name: "db-" + site, image: d.images["mariadb"], caps: mariaDBCapabilities,
		env:     map[string]string{"MARIADB_DATABASE": "wordpress", "MARIADB_USER": "wordpress", "MARIADB_PASSWORD": testDatabasePassword},
		volumes: map[string]string{mysql: "/var/lib/mysql"}})
	b.web = d.run(container{name: "web-" + site, image: d.images["wordpress"], caps: webCapabilities,
		env: map[string]string{
			"WORDPRESS_DB_HOST": "db-" + site + ":3306", "WORDPRESS_DB_NAME": "wordpress", "WORDPRESS_DB_USER": "wordpress",
			"WORDPRESS_DB_PASSWORD": testDatabasePassword, "WORDPRESS_ADMIN_USER": WordPressAdmin,
			"WORDPRESS_ADMIN_PASSWORD": testAdminPassword, "WORDPRESS_APP_PASSWORD": testAppPassword,
			"WORDPRESS_STOCK_UPLOADS": map[bool]string{false: "0", true: "1"}[stock],
		},
		volumes: map[string]string{uploads: "/var/lib/wordpress/wp-content/uploads"}})
	return b
}

func (b *wordPressBed) url() string { return "http://" + b.address(b.web) }

// newWordPressClient drives the WordPress at url, its choices seeded by
// seed, once the site answers and takes the application password (Setup).
func newWordPressClient(t *testing.T, url string, seed uint64) *WordPress {
	w, err := NewWordPress(Config{Name: "wp", URL: url, User: WordPressAdmin, Password: testAppPassword, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Setup(context.Background(), 5*time.Minute); err != nil {
		t.Fatalf("WordPress did not come up: %v", err)
	}
	return w
}

func startWordPress(t *testing.T) (*wordPressBed, *WordPress) {
	b := newDockerBed(t, "mariadb", "wordpress").runWordPress("a", "mysql", "uploads")
	return b, newWordPressClient(t, b.url(), 1)
}

// TestWordPressCrashKeepsAcknowledgedWrites kills MariaDB, then apache2,
// then both, with kill -9 while the driver writes, restarts them on the same
// directories, and reads everything back: every acknowledged post and upload
// must be there, intact, and MariaDB must have recovered by itself.
func TestWordPressCrashKeepsAcknowledgedWrites(t *testing.T) {
	b, w := startWordPress(t)
	ctx := context.Background()
	writeUntil(t, ctx, w, 12, 12)

	db := crashMidWrites(t, ctx, w, 6, 6, func() { b.kill(b.db) }, func() { b.start(b.db) })
	t.Logf("MariaDB kill -9: %s", db)
	recovery := grepLines(b.logs(b.db), "crash recovery", "To recover", "redo log", "ready for connections")
	if !strings.Contains(recovery, "crash recovery") {
		t.Errorf("MariaDB's log shows no crash recovery after kill -9:\n%s", tail(b.logs(b.db), 30))
	}
	t.Logf("MariaDB's recovery:\n%s", recovery)
	web := crashMidWrites(t, ctx, w, 6, 6, func() { b.kill(b.web) }, func() { b.start(b.web) })
	t.Logf("apache2 kill -9: %s", web)
	both := crashMidWrites(t, ctx, w, 6, 6, func() { b.kill(b.web); b.kill(b.db) }, func() { b.start(b.db); b.start(b.web) })
	t.Logf("both kill -9: %s", both)

	readBackAll(t, w, time.Time{})
}

// TestWordPressReadBackCatchesDamage damages what WordPress holds behind its
// back -- a post's content rewritten, a post's row deleted, an uploaded file
// deleted -- and the read-back must name each, and then an application whose
// database is gone must be reported as not coming back.
func TestWordPressReadBackCatchesDamage(t *testing.T) {
	b, w := startWordPress(t)
	ctx := context.Background()
	writeUntil(t, ctx, w, 16, 16)
	var posts, media []Write
	for _, op := range w.Journal().Writes() {
		switch op.Operation {
		case OpPost:
			posts = append(posts, op)
		case OpMedia:
			media = append(media, op)
		}
	}
	if len(posts) < 3 || len(media) < 1 {
		t.Fatalf("seed 1 made %d posts and %d uploads; the test needs 3 and 1", len(posts), len(media))
	}
	sql := fmt.Sprintf("UPDATE wp_posts SET post_content='tampered' WHERE ID=%s; DELETE FROM wp_posts WHERE ID=%s;", posts[0].Ref, posts[1].Ref)
	b.exec(b.db, "mariadb", "--protocol=socket", "-uroot", "wordpress", "-e", sql)
	file := filepath.Join(b.dir, "uploads", strings.TrimPrefix(media[0].Path, "/wp-content/uploads/"))
	if err := os.Remove(file); err != nil {
		t.Fatalf("removing the upload %s: %v", file, err)
	}

	v, err := w.ReadBack(ctx, time.Time{}, time.Minute)
	if err != nil {
		t.Fatalf("read-back: %v", err)
	}
	database, uploads := v.Volumes[0], v.Volumes[1]
	if len(database.Corrupt) != 1 || database.Corrupt[0].Key != posts[0].Key {
		t.Errorf("corrupt on the database %+v, want %s", database.Corrupt, posts[0].Key)
	}
	if len(database.Lost) != 1 || database.Lost[0].Key != posts[1].Key || len(database.Holes) != 1 {
		t.Errorf("lost on the database %+v (holes %+v), want %s, a hole", database.Lost, database.Holes, posts[1].Key)
	}
	if len(uploads.Lost) != 1 || uploads.Lost[0].Key != media[0].Key {
		t.Errorf("lost on the uploads %+v, want %s", uploads.Lost, media[0].Key)
	}
	t.Logf("after the damage:\n%s%s", v, strings.Join(v.Failures(true), "\n"))

	b.kill(b.db) // and never restarted
	v, err = w.ReadBack(ctx, time.Time{}, 15*time.Second)
	if !errors.Is(err, ErrUnavailable) || v.Unavailable == "" {
		t.Fatalf("read-back with the database gone: %v (verdict %s), want ErrUnavailable", err, v)
	}
	t.Logf("with the database gone: %s", v.Failures(false)[0])
}

func countAcknowledged(j *Journal, volume string) int {
	n := 0
	for _, w := range j.Writes() {
		for _, p := range w.Parts {
			if p.Volume == volume && w.Outcome == Acknowledged {
				n++
			}
		}
	}
	return n
}

// grepLines keeps the lines of s holding any of the words.
func grepLines(s string, words ...string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		for _, w := range words {
			if strings.Contains(line, w) {
				out = append(out, line)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

func tail(s string, lines int) string {
	all := strings.Split(s, "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// TestWordPressFailoverFromCrashConsistentCopy is an unplanned fail-over of
// WordPress as the real bed does one: while the driver writes, both volumes
// (on ext4, on loop devices over a btrfs pool) are snapshotted at one
// instant, the old site goes on acknowledging a few writes and then dies,
// and WordPress starts on the copy. ext4 replays its journal at mount and
// MariaDB its redo log at start, with no manual step; every write
// acknowledged before the copy must read back, those acknowledged after it
// are the loss. The application then goes on on the copy.
func TestWordPressFailoverFromCrashConsistentCopy(t *testing.T) {
	d := newDockerBed(t, "mariadb", "wordpress")
	p := newPool(t)
	p.site("site-a")
	a := d.runWordPress("a", p.volume("site-a", "mysql"), p.volume("site-a", "uploads"))
	w := newWordPressClient(t, a.url(), 3)
	ctx := context.Background()
	writeUntil(t, ctx, w, 10, 10)
	var b *wordPressBed
	v := failOverTo(t, ctx, w, p, func() { d.kill(a.web); d.kill(a.db) }, func() string {
		b = d.runWordPress("b", p.open("site-b", "mysql"), p.open("site-b", "uploads"))
		return b.url()
	})
	logs := d.logs(b.db)
	t.Logf("MariaDB on the copy:\n%s", grepLines(logs, "crash recovery", "To recover", "ready for connections"))
	if !strings.Contains(logs, "crash recovery") {
		t.Errorf("MariaDB started on the copy without crash recovery: the copy was not taken mid-writes")
	}
	goOn(t, ctx, w, v)
}
