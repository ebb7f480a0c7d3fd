package replication_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/replication"
)

var (
	epoch  = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	source = chain.Ref{Cluster: "aaaaaaaa-0000-4000-8000-000000000001", Volume: "00000000-0000-4000-8000-000000000001"}
	siteB  = chain.ClusterID("bbbbbbbb-0000-4000-8000-000000000002")
	siteC  = chain.ClusterID("cccccccc-0000-4000-8000-000000000003")
)

// TestPairing runs the scripts in testdata/: each command feeds the pairing one
// input and prints whether it applied and the state that results. Regenerate
// the expected output with -rewrite after a deliberate change.
//
//	new [interval=5m] [retention=2] [base=name:guid] [origin=volume@name:guid]
//	tick t=DURATION            sync-now t=DURATION       want t=DURATION
//	taken name=N guid=G t=D    shipped name=N bytes=B started=D t=D
//	failed name=N t=D          pruned name=N             pause
//	reaim target=b|c base=name:guid|origin|none t=D      in-sync-since t=D
func TestPairing(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var p *replication.Pairing
		var origin replication.Base
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			args := map[string]string{}
			for _, a := range d.CmdArgs {
				args[a.Key] = strings.Join(a.Vals, ",")
			}
			at := func(key string) time.Time {
				v, err := time.ParseDuration(args[key])
				if err != nil {
					d.Fatalf(t, "%s=%q: %v", key, args[key], err)
				}
				return epoch.Add(v)
			}
			var applied bool
			switch d.Cmd {
			case "new":
				interval, retention := 5*time.Minute, 2
				if v, ok := args["interval"]; ok {
					interval, _ = time.ParseDuration(v)
				}
				if v, ok := args["retention"]; ok {
					retention, _ = strconv.Atoi(v)
				}
				if v, ok := args["origin"]; ok {
					volume, rest, _ := strings.Cut(v, "@")
					name, guid, _ := strings.Cut(rest, ":")
					origin = replication.Base{Volume: volume, Snapshot: name, GUID: guid}
				}
				var err error
				p, err = replication.New(source, siteB, interval, retention, parseBase(args["base"], origin), epoch)
				if err != nil {
					return "error: " + err.Error()
				}
				return dump(p)
			case "tick":
				p.Tick(at("t"))
				return dump(p)
			case "sync-now":
				p.SyncNow(at("t"))
				return dump(p)
			case "want":
				return want(p.Want(at("t")))
			case "taken":
				applied = p.Taken(args["name"], args["guid"], at("t"))
			case "shipped":
				bytes, _ := strconv.ParseUint(args["bytes"], 10, 64)
				applied = p.Shipped(args["name"], bytes, at("started"), at("t"))
			case "failed":
				applied = p.Failed(args["name"], "stream reset by peer", at("t"))
			case "pruned":
				applied = p.Pruned(args["name"])
			case "pause":
				p.Pause()
				return dump(p)
			case "reaim":
				target := map[string]chain.ClusterID{"b": siteB, "c": siteC}[args["target"]]
				p.Reaim(target, parseBase(args["base"], origin), at("t"))
				return dump(p)
			case "in-sync-since":
				return fmt.Sprint(p.InSyncSince(at("t")))
			case "common-base":
				var held []string
				for _, a := range d.CmdArgs {
					held = append(held, a.Key)
				}
				return base(replication.CommonBase(p.Snapshots, origin, held))
			default:
				d.Fatalf(t, "unknown command %q", d.Cmd)
			}
			return fmt.Sprintf("applied=%v\n%s", applied, dump(p))
		})
	})
}

func parseBase(v string, origin replication.Base) replication.Base {
	switch v {
	case "", "none":
		return replication.Base{}
	case "origin":
		return origin
	}
	name, guid, _ := strings.Cut(v, ":")
	return replication.Base{Snapshot: name, GUID: guid}
}

func since(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Sub(epoch).String()
}

func dump(p *replication.Pairing) string {
	var b strings.Builder
	fmt.Fprintf(&b, "phase=%s target=%s due=%s retry=%s base=%s failures=%d\n",
		p.Phase, p.Target[:8], since(p.Due), since(p.RetryAt), base(p.Base), p.Failures)
	for _, s := range p.Snapshots {
		fmt.Fprintf(&b, "  %s guid=%s taken=%s shipped=%s\n", s.Name, or(s.GUID, "-"), since(s.TakenAt), since(s.ShippedAt))
	}
	if p.Last.Snapshot != "" {
		fmt.Fprintf(&b, "last: %s bytes=%d took=%s at=%s\n", p.Last.Snapshot, p.Last.Bytes, p.Last.Duration, since(p.Last.At))
	}
	return b.String()
}

func want(w replication.Work) string {
	var parts []string
	if w.Snapshot != "" {
		parts = append(parts, "snapshot "+w.Snapshot)
	}
	if w.Ship != nil {
		parts = append(parts, fmt.Sprintf("ship %s (%s) to %s from %s", w.Ship.Snapshot, w.Ship.GUID, w.Ship.Target[:8], base(w.Ship.Base)))
	}
	if len(w.Prune) > 0 {
		parts = append(parts, "prune "+strings.Join(w.Prune, " "))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, "\n")
}

func base(b replication.Base) string {
	if b.IsFull() {
		return "full"
	}
	if b.Volume != "" {
		return b.Volume + "@" + b.Snapshot
	}
	return b.Snapshot
}

func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

func TestNewRefusesInvalidPairings(t *testing.T) {
	for _, tt := range []struct {
		name      string
		source    chain.Ref
		target    chain.ClusterID
		interval  time.Duration
		retention int
	}{
		{"no source", chain.Ref{}, siteB, time.Minute, 2},
		{"no target", source, "", time.Minute, 2},
		{"to itself", source, source.Cluster, time.Minute, 2},
		{"no interval", source, siteB, 0, 2},
		{"retention 1", source, siteB, time.Minute, 1},
	} {
		if _, err := replication.New(tt.source, tt.target, tt.interval, tt.retention, replication.Base{}, epoch); err == nil {
			t.Errorf("%s: New accepted it", tt.name)
		}
	}
}
