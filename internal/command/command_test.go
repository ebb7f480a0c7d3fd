package command

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestParseTellsHelpFromBadFlagsAndStrayArguments(t *testing.T) {
	for _, c := range []struct {
		args []string
		want error
		says string
	}{
		{[]string{"-help"}, flag.ErrHelp, "Usage: demo"},
		{[]string{"-no-such-flag"}, ErrUsage, "no-such-flag"},
		{[]string{"-n", "1", "stray"}, ErrUsage, `demo takes no arguments, got ["stray"]`},
		{[]string{"-n", "1"}, nil, ""},
	} {
		var out bytes.Buffer
		flags := NewFlagSet("demo", "Usage: demo\n", &out)
		flags.Int("n", 0, "a number")
		err := Parse(flags, c.args)
		if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
			t.Errorf("%v: %v, want %v", c.args, err, c.want)
		}
		if !strings.Contains(out.String(), c.says) {
			t.Errorf("%v printed %q, want it to say %q", c.args, out.String(), c.says)
		}
	}
}

func TestProblemsPrintsEveryOneBehindTheName(t *testing.T) {
	var out bytes.Buffer
	if err := Problems(&out, "demo", nil); err != nil {
		t.Fatalf("no problems gave %v", err)
	}
	if err := Problems(&out, "demo", []string{"one", "two"}); !errors.Is(err, ErrUsage) {
		t.Fatalf("two problems gave %v, want ErrUsage", err)
	}
	if out.String() != "demo: one\ndemo: two\n" {
		t.Errorf("printed %q", out.String())
	}
}

func TestReadRootsNamesTheFlagOfABadBundle(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("no certificate here"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{notPEM, filepath.Join(dir, "missing.pem")} {
		if _, err := ReadRoots(file, "--ca-file"); err == nil || !strings.Contains(err.Error(), "--ca-file") {
			t.Errorf("%s: %v, want an error naming --ca-file", file, err)
		}
	}
}

func TestLoadKubeconfigNamesAFileThatIsNotThere(t *testing.T) {
	file := filepath.Join(t.TempDir(), "none")
	if _, err := LoadKubeconfig(file); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("got %v, want an error naming %s", err, file)
	}
}

func TestNewSchemeKnowsClientGosKindsAndTheOnesAdded(t *testing.T) {
	added := schema.GroupVersionKind{Group: "test.baton.dev", Version: "v1", Kind: "Thing"}
	scheme, err := NewScheme(func(s *runtime.Scheme) error {
		s.AddKnownTypeWithName(added, &metav1.Status{})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []schema.GroupVersionKind{added, {Version: "v1", Kind: "Pod"}} {
		if !scheme.Recognizes(kind) {
			t.Errorf("the scheme does not know %s", kind)
		}
	}
	broken := errors.New("no such group")
	if _, err := NewScheme(func(*runtime.Scheme) error { return broken }); !errors.Is(err, broken) {
		t.Errorf("a kind that does not add gave %v", err)
	}
}
