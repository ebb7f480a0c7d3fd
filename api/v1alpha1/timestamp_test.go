package v1alpha1_test

import (
	"testing"
	"time"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
)

// TestTimestampsAreExact: what NewTimestamp renders, Time parses back to the
// same instant, nanoseconds included; the zero instant is the empty string.
func TestTimestampsAreExact(t *testing.T) {
	east := time.FixedZone("east", 5*3600)
	for _, instant := range []time.Time{
		{},
		time.Date(2026, 10, 3, 12, 0, 0, 0, time.UTC),
		time.Date(2026, 10, 3, 12, 0, 0, 1, time.UTC),
		time.Date(2026, 10, 3, 17, 0, 0, 123456789, east),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
	} {
		stamp := v1.NewTimestamp(instant)
		got, err := stamp.Time()
		if err != nil {
			t.Fatalf("%s: %v", stamp, err)
		}
		if !got.Equal(instant) || got.Location() != time.UTC {
			t.Errorf("%v rendered %q read back as %v", instant, stamp, got)
		}
	}
	if v1.NewTimestamp(time.Time{}) != "" {
		t.Error("the zero instant renders non-empty")
	}
	if _, err := v1.Timestamp("yesterday").Time(); err == nil {
		t.Error("a malformed timestamp parsed")
	}
}

// TestTheServerRefusesAMalformedTimestamp: the schema's date-time format is
// enforced, so a record field never holds what Time cannot parse.
func TestTheServerRefusesAMalformedTimestamp(t *testing.T) {
	c := apiServer(t)
	ns := newNamespace(t, c, "timestamps")
	ctx := testContext(t)
	o := fixtureOf("Replication").object().(*v1.Replication)
	o.Name, o.Namespace = "malformed", ns
	if err := c.Create(ctx, o); err != nil {
		t.Fatal(err)
	}
	o.Status.Cycle = &v1.ReplicationCycle{Phase: v1.CycleIdle, Due: "yesterday"}
	if err := c.Status().Update(ctx, o); err == nil {
		t.Fatal("a cycle due \"yesterday\" was accepted")
	}
}
