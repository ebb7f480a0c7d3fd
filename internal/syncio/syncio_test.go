package syncio_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/baton-dr/baton/internal/syncio"
)

// Writes from many goroutines arrive whole: no line is torn or lost.
func TestConcurrentWritesArriveWhole(t *testing.T) {
	var b syncio.Buffer
	w := &syncio.Writer{W: &b}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if _, err := w.Write([]byte(strings.Repeat(string(rune('a'+i)), 32) + "\n")); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 800 {
		t.Fatalf("%d lines, want 800", len(lines))
	}
	for _, line := range lines {
		if len(line) != 32 || strings.Count(line, line[:1]) != 32 {
			t.Fatalf("a torn line: %q", line)
		}
	}
	if tail := b.Tail(5); tail != lines[799][28:]+"\n" {
		t.Errorf("Tail(5) = %q", tail)
	}
}
