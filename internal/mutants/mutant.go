// Package mutants measures how much of the DR logic's behaviour the tests pin
// down: it swaps one operator at a time in a package (a mutant), and judges
// each mutant twice, by the package's own unit tests and by a simulation sweep
// built from the mutated tree. A mutant neither notices is a change to the
// logic no test would catch.
//
// The mutants are found by gremlins (github.com/go-gremlins/gremlins, pinned
// by ci/mutants/gremlins.go.mod): its dry run lists every operator it would
// swap, and whether the package's tests cover it. Gremlins judges a mutant
// only by `go test`, and swaps tokens in a copy of the tree it rewrites with
// go/printer; the judging here is its own, because the second judge is a
// sweep of every scenario, and because `go build -overlay` lets each mutant
// be built beside the real tree without copying it.
package mutants

import (
	"bytes"
	"fmt"
	"go/scanner"
	"go/token"
)

// Mutant is one operator swapped at one place of one file.
type Mutant struct {
	// File is the path from the module's root, e.g. storage/chain/ref.go.
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
	// Type is gremlins' name for the kind of swap, e.g. CONDITIONALS_NEGATION.
	Type string `json:"type"`
	// From and To are the operator before and after the swap.
	From string `json:"from"`
	To   string `json:"to"`
	// Covered says the package's unit tests run the line (gremlins' dry run):
	// a mutant they never run survives them without being tried.
	Covered bool `json:"covered"`
}

// ID names the mutant the way docs/mutants.md lists equivalent ones.
func (m Mutant) ID() string {
	return fmt.Sprintf("%s:%d:%d %s", m.File, m.Line, m.Column, m.Type)
}

// String is the mutant as a reader wants it: where, and what became what.
func (m Mutant) String() string {
	return fmt.Sprintf("%s:%d:%d %s (%s -> %s)", m.File, m.Line, m.Column, m.Type, m.From, m.To)
}

// swaps is gremlins' table of what each kind of mutation turns an operator
// into (internal/engine/mappings.go of gremlins v0.6.0): gremlins reports a
// mutant's kind and place, not the token it writes, and keeps the table in
// an internal package.
var swaps = map[string]map[token.Token]token.Token{
	"ARITHMETIC_BASE": {
		token.ADD: token.SUB, token.MUL: token.QUO, token.QUO: token.MUL,
		token.REM: token.MUL, token.SUB: token.ADD,
	},
	"CONDITIONALS_BOUNDARY": {
		token.GEQ: token.GTR, token.GTR: token.GEQ, token.LEQ: token.LSS, token.LSS: token.LEQ,
	},
	"CONDITIONALS_NEGATION": {
		token.EQL: token.NEQ, token.GEQ: token.LSS, token.GTR: token.LEQ,
		token.LEQ: token.GTR, token.LSS: token.GEQ, token.NEQ: token.EQL,
	},
	"INCREMENT_DECREMENT": {token.DEC: token.INC, token.INC: token.DEC},
	"INVERT_ASSIGNMENTS": {
		token.ADD_ASSIGN: token.SUB_ASSIGN, token.MUL_ASSIGN: token.QUO_ASSIGN,
		token.QUO_ASSIGN: token.MUL_ASSIGN, token.SUB_ASSIGN: token.ADD_ASSIGN,
	},
	"INVERT_LOGICAL":   {token.LAND: token.LOR, token.LOR: token.LAND},
	"INVERT_LOOPCTRL":  {token.BREAK: token.CONTINUE, token.CONTINUE: token.BREAK},
	"INVERT_NEGATIVES": {token.SUB: token.ADD},
	"REMOVE_SELF_ASSIGNMENTS": {
		token.ADD_ASSIGN: token.ASSIGN, token.AND_ASSIGN: token.ASSIGN, token.MUL_ASSIGN: token.ASSIGN,
		token.OR_ASSIGN: token.ASSIGN, token.QUO_ASSIGN: token.ASSIGN, token.SUB_ASSIGN: token.ASSIGN,
	},
}

// swapAt finds the operator at line:column of src and says what a mutation
// of kind typ turns it into, refusing a place that holds no operator the
// kind swaps: a position that drifted (the file changed since gremlins read
// it) must not mutate whatever token is there now.
func swapAt(src []byte, line, column int, typ string) (offset int, from, to token.Token, err error) {
	table, known := swaps[typ]
	if !known {
		return 0, 0, 0, fmt.Errorf("mutation kind %s: not one this judge knows how to apply", typ)
	}
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, 0)
	for {
		pos, tok, _ := s.Scan()
		if tok == token.EOF {
			return 0, 0, 0, fmt.Errorf("%d:%d: no token there", line, column)
		}
		p := fset.Position(pos)
		if p.Line < line || (p.Line == line && p.Column < column) {
			continue
		}
		if p.Line != line || p.Column != column {
			return 0, 0, 0, fmt.Errorf("%d:%d: no token starts there", line, column)
		}
		swapped, ok := table[tok]
		if !ok {
			return 0, 0, 0, fmt.Errorf("%d:%d: %s is no operator %s swaps", line, column, tok, typ)
		}
		return p.Offset, tok, swapped, nil
	}
}

// Apply returns src with m's operator swapped, and m with From and To filled
// in. Only the operator's bytes change, so every other line and column of
// the mutated file is the original's.
func Apply(src []byte, m Mutant) ([]byte, Mutant, error) {
	offset, from, to, err := swapAt(src, m.Line, m.Column, m.Type)
	if err != nil {
		return nil, m, fmt.Errorf("%s: %w", m.File, err)
	}
	if !bytes.HasPrefix(src[offset:], []byte(from.String())) {
		panic(fmt.Sprintf("mutants: the scanner put %s at offset %d of %s, where the bytes differ", from, offset, m.File))
	}
	out := make([]byte, 0, len(src)+2)
	out = append(out, src[:offset]...)
	out = append(out, to.String()...)
	out = append(out, src[offset+len(from.String()):]...)
	m.From, m.To = from.String(), to.String()
	return out, m, nil
}
