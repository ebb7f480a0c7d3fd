package webapps

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"regexp"
)

// namePattern is what an instance name may be: it goes into slugs, file
// names and titles, which WordPress and Gitea would otherwise rewrite.
var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,30}$`)

func checkName(name string) error {
	if !namePattern.MatchString(name) {
		return fmt.Errorf("instance name %q: want 1-31 of a-z, 0-9 and -, starting with a letter or digit", name)
	}
	return nil
}

// keys makes the idempotency keys of one driver run: baton-NAME-RUN-SEQ, RUN
// a random tag so that two runs against one instance never share a key, and
// the read-back of one run knows the other's objects for what they are.
type keys struct{ prefix string }

func newKeys(name string, rng *rand.Rand) keys {
	return keys{prefix: fmt.Sprintf("baton-%s-%08x-", name, rng.Uint32())}
}

func (k keys) key(seq uint64) string { return fmt.Sprintf("%s%06d", k.prefix, seq) }

// ours reports whether key was made by this run.
func (k keys) ours(key string) bool {
	return len(key) > len(k.prefix) && key[:len(k.prefix)] == k.prefix
}

// textContent is a post's, an issue's or a file's content: a line naming
// the key, then random hex lines. Plain ASCII, so neither application
// rewrites it.
func textContent(rng *rand.Rand, key string, lines int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "baton write %s\n", key)
	raw := make([]byte, 32)
	for i := 0; i < lines; i++ {
		for j := range raw {
			raw[j] = byte(rng.Uint32())
		}
		b.WriteString(hex.EncodeToString(raw))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// pngContent is a media upload: a small PNG of random pixels, which
// WordPress accepts as an image and stores as sent.
func pngContent(rng *rand.Rand, side int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, side, side))
	for y := 0; y < side; y++ {
		for x := 0; x < side; x++ {
			v := rng.Uint32()
			img.SetNRGBA(x, y, color.NRGBA{R: byte(v), G: byte(v >> 8), B: byte(v >> 16), A: 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(fmt.Sprintf("webapps: encoding a PNG in memory: %v", err))
	}
	return b.Bytes()
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// gitBlobSHA is the object name git gives a file's content: Gitea answers it
// for every file it writes, so an acknowledged commit is checked against it.
func gitBlobSHA(content []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}
