package site

import "fmt"

// apiNames is a core enum's values with the names API objects record them
// by. One table serves writing a record and reading it back, so that the two
// directions cannot disagree.
type apiNames[V comparable, N ~string] struct {
	// what the values are, for errors: "member state".
	what  string
	pairs []apiName[V, N]
}

type apiName[V comparable, N ~string] struct {
	value V
	name  N
}

// name is the API's name of a core value; a value the API has no word for is
// ErrUnrepresentable.
func (n apiNames[V, N]) name(value V) (N, error) {
	for _, p := range n.pairs {
		if p.value == value {
			return p.name, nil
		}
	}
	return "", fmt.Errorf("%w: %s %q", ErrUnrepresentable, n.what, fmt.Sprint(value))
}

// value is the core value an API object names.
func (n apiNames[V, N]) value(name N) (V, error) {
	for _, p := range n.pairs {
		if p.name == name {
			return p.value, nil
		}
	}
	var zero V
	return zero, fmt.Errorf("%s %q", n.what, name)
}
