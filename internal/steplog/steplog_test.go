package steplog

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

func TestStepPrintsWhatItSaysAndHowLongItTook(t *testing.T) {
	var out strings.Builder
	l := New(&out, "realbed")
	if err := l.Step("network", func() (string, error) { return "baton-realbed made", nil }); err != nil {
		t.Fatalf("Step: %v", err)
	}
	if err := l.Step("clusters", func() (string, error) { return "", nil }); err != nil {
		t.Fatalf("Step: %v", err)
	}
	want := regexp.MustCompile(`^realbed: \[ *\d+\.\d s\] network: baton-realbed made \(\d+\.\d s\)
realbed: \[ *\d+\.\d s\] clusters \(\d+\.\d s\)
$`)
	if !want.MatchString(out.String()) {
		t.Fatalf("printed %q, want two lines of %s", out.String(), want)
	}
}

func TestStepNamesTheStepThatFailed(t *testing.T) {
	var out strings.Builder
	refused := errors.New("refused")
	err := New(&out, "ocm").Step("hub: images", func() (string, error) { return "", refused })
	if !errors.Is(err, refused) || !strings.HasPrefix(err.Error(), "hub: images: ") {
		t.Fatalf("Step: %v, want the step's name before %v", err, refused)
	}
	if !strings.Contains(out.String(), "ocm: [") || !strings.Contains(out.String(), "hub: images: failed after ") {
		t.Fatalf("printed %q, want the failure on a line of its own", out.String())
	}
}
