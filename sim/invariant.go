package sim

import "fmt"

// invariant is a safety check that sits outside the system it checks.
type invariant struct {
	name  string
	label string // "invariant <name>", what a nested run reports
	check func() error
}

// AddInvariant registers a check that runs after every event, in registration
// order. The first error stops the run: the World panics with a *Failure naming
// the invariant, the event after which it broke, the seed and the replay
// command. Checks must only read; one that schedules or draws randomness would
// change the run it observes.
func (w *World) AddInvariant(name string, check func() error) {
	if name == "" || check == nil {
		panic("sim: an invariant needs a name and a check")
	}
	w.invariants = append(w.invariants, invariant{name: name, label: "invariant " + name, check: check})
}

func (w *World) checkInvariants(event string) {
	scheduled := w.nextSeq
	for _, inv := range w.invariants {
		w.running = inv.label
		err := inv.check()
		w.running = ""
		if w.nextSeq != scheduled {
			panic(fmt.Sprintf("sim: invariant %q scheduled an event: checks must only read", inv.name))
		}
		if err != nil {
			panic(w.failure(event, fmt.Sprintf("invariant %q violated: %v", inv.name, err), err))
		}
	}
}
