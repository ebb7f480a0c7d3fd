package real

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadAppImages reads images.sh's lines, and names what is wrong with a
// file that is missing, malformed or lacks an image.
func TestReadAppImages(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) string {
		path := filepath.Join(dir, "images.txt")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	images, err := ReadAppImages(write("mariadb=baton.local/mariadb:1\nwordpress=baton.local/wordpress:2\ngitea=baton.local/gitea:3\n"))
	if err != nil || images["mariadb"] != "baton.local/mariadb:1" || images["wordpress"] != "baton.local/wordpress:2" ||
		images["gitea"] != "baton.local/gitea:3" {
		t.Fatalf("got %v, %v", images, err)
	}
	for _, c := range []struct{ name, text, want string }{
		{"missing", "", "images.sh builds them"},
		{"malformed", "mariadb baton.local/mariadb:1\n", "not a name=image line"},
		{"no gitea", "mariadb=a:1\nwordpress=b:2\n", "names no gitea image"},
	} {
		path := filepath.Join(dir, "absent.txt")
		if c.name != "missing" {
			path = write(c.text)
		}
		if _, err := ReadAppImages(path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}

// FuzzReadAppImages: any file gives images or an error, never a panic, and
// images it accepts name every application.
func FuzzReadAppImages(f *testing.F) {
	f.Add("mariadb=a:1\nwordpress=b:2\ngitea=c:3\n")
	f.Add("=\n\n==")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, text string) {
		path := filepath.Join(dir, "images.txt")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		images, err := ReadAppImages(path)
		if err == nil && (images["mariadb"] == "" || images["wordpress"] == "" || images["gitea"] == "") {
			t.Fatalf("accepted %q as %v", text, images)
		}
	})
}
