package backend

import "time"

// Clock is the only source of time the storage core reads. Production passes the
// wall clock; the simulation passes its own, which moves only when the simulation
// moves it.
type Clock interface {
	Now() time.Time
}
