package main

import (
	"bytes"
	"io"
	"sync"

	"github.com/baton-dr/baton/internal/syncio"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/scenarios"
)

// sideBySide runs the scenarios at once, each in a goroutine of its own
// (run makes its bed and closes it), and gives their results in the
// scenarios' order. What a scenario's bed says as it goes reaches progress
// line by line, each line whole and prefixed with the scenario's name; what
// it prints of its end (run's w, then its result) reaches out in one piece
// once it ended, so that two summaries never interleave.
func sideBySide(selected []scenarios.Scenario, progress, out io.Writer,
	run func(sc scenarios.Scenario, progress, w io.Writer) reports.Result) []reports.Result {
	lines, summaries := &syncio.Writer{W: progress}, &syncio.Writer{W: out}
	results := make([]reports.Result, len(selected))
	var wg sync.WaitGroup
	for i, sc := range selected {
		wg.Add(1)
		go func() {
			defer wg.Done()
			log := &prefixedLines{prefix: sc.Name + " | ", w: lines}
			var summary bytes.Buffer
			results[i] = run(sc, log, &summary)
			printResult(&summary, results[i])
			log.flush()
			_, _ = summaries.Write(summary.Bytes()) // the terminal's: nothing to do about a failure
		}()
	}
	wg.Wait()
	return results
}

// prefixedLines writes each complete line written to it to w with prefix
// before it, in one Write; a line's start waits for its end. Each scenario
// has its own, over a shared w.
type prefixedLines struct {
	prefix string
	w      io.Writer
	mu     sync.Mutex
	part   []byte
}

func (p *prefixedLines) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.part = append(p.part, b...)
	for {
		i := bytes.IndexByte(p.part, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := append([]byte(p.prefix), p.part[:i+1]...)
		p.part = p.part[i+1:]
		if _, err := p.w.Write(line); err != nil {
			return len(b), err
		}
	}
}

// flush writes a last line that never ended.
func (p *prefixedLines) flush() {
	p.mu.Lock()
	unended := len(p.part) > 0
	p.mu.Unlock()
	if unended {
		_, _ = p.Write([]byte("\n")) // as Write's: the terminal's
	}
}
