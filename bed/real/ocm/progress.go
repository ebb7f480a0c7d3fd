package ocm

import (
	"io"

	"github.com/baton-dr/baton/internal/steplog"
)

// NewProgress prints the install's steps to out, one line each after
// "ocm:" with the time since now: what a bring-up phase of the bed prints.
func NewProgress(out io.Writer) *steplog.Log { return steplog.New(out, "ocm") }
