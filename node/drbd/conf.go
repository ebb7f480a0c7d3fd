package drbd

import (
	"fmt"
	"strings"
)

// stanza is one statement of DRBD's configuration language, which both
// `drbdsetup show` and `drbdadm dump` print: words ending in ';', or words
// opening a '{' block of stanzas.
//
//	resource r0 {
//	    _this_host {
//	        address ipv4 10.99.0.1:7789;
//	        volume 0 { device minor 0; disk "/dev/zvol/tank/r0"; }
//	    }
//	}
type stanza struct {
	words   []string
	block   []stanza // the stanzas inside a block
	isBlock bool     // a block, even an empty one, rather than a statement
}

// maxConfDepth bounds nesting: DRBD's deepest is resource/on/volume/disk.
const maxConfDepth = 8

// parseConf reads a configuration text into its top-level stanzas. It reads
// '#' comments to the end of the line, double-quoted words with backslash
// escapes, and refuses unbalanced braces, unterminated statements and
// nesting deeper than DRBD's.
func parseConf(text string) ([]stanza, error) {
	tokens, err := tokenizeConf(text)
	if err != nil {
		return nil, err
	}
	stanzas, rest, err := parseStanzas(tokens, 0)
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("drbd configuration has an unmatched %q", rest[0].text)
	}
	return stanzas, nil
}

type confToken struct {
	text   string
	quoted bool // a quoted word is never punctuation, whatever it holds
}

func (t confToken) is(punct string) bool { return !t.quoted && t.text == punct }

func tokenizeConf(text string) ([]confToken, error) {
	var tokens []confToken
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case c == '{' || c == '}' || c == ';':
			tokens = append(tokens, confToken{text: string(c)})
			i++
		case c == '"':
			word, next, err := quotedWord(text, i)
			if err != nil {
				return nil, err
			}
			tokens = append(tokens, confToken{text: word, quoted: true})
			i = next
		default:
			start := i
			for i < len(text) && !strings.ContainsRune(" \t\n\r{};#\"", rune(text[i])) {
				i++
			}
			tokens = append(tokens, confToken{text: text[start:i]})
		}
	}
	return tokens, nil
}

// quotedWord reads the double-quoted word starting at text[start].
func quotedWord(text string, start int) (string, int, error) {
	var b strings.Builder
	for i := start + 1; i < len(text); i++ {
		switch text[i] {
		case '\\':
			if i+1 < len(text) {
				i++
				b.WriteByte(text[i])
			}
		case '"':
			return b.String(), i + 1, nil
		default:
			b.WriteByte(text[i])
		}
	}
	return "", 0, fmt.Errorf("drbd configuration has an unterminated string at byte %d", start)
}

func parseStanzas(tokens []confToken, depth int) ([]stanza, []confToken, error) {
	if depth > maxConfDepth {
		return nil, nil, fmt.Errorf("drbd configuration nests deeper than %d", maxConfDepth)
	}
	stanzas := []stanza{}
	var words []string
	for len(tokens) > 0 {
		t := tokens[0]
		switch {
		case t.is(";"):
			if len(words) > 0 {
				stanzas = append(stanzas, stanza{words: words})
			}
			words, tokens = nil, tokens[1:]
		case t.is("{"):
			block, rest, err := parseStanzas(tokens[1:], depth+1)
			if err != nil {
				return nil, nil, err
			}
			if len(rest) == 0 || !rest[0].is("}") {
				return nil, nil, fmt.Errorf("drbd configuration block %q is not closed", strings.Join(words, " "))
			}
			stanzas = append(stanzas, stanza{words: words, block: block, isBlock: true})
			words, tokens = nil, rest[1:]
		case t.is("}"):
			if len(words) > 0 {
				return nil, nil, fmt.Errorf("drbd configuration statement %q lacks its ';'", strings.Join(words, " "))
			}
			return stanzas, tokens, nil
		default:
			words, tokens = append(words, t.text), tokens[1:]
		}
	}
	if len(words) > 0 {
		return nil, nil, fmt.Errorf("drbd configuration statement %q lacks its ';'", strings.Join(words, " "))
	}
	return stanzas, nil, nil
}

// find returns the first stanza whose words start with the given ones.
func find(stanzas []stanza, words ...string) (stanza, bool) {
	all := findAll(stanzas, words...)
	if len(all) == 0 {
		return stanza{}, false
	}
	return all[0], true
}

// findAll returns every stanza whose words start with the given ones, in order.
func findAll(stanzas []stanza, words ...string) []stanza {
	var out []stanza
	for _, s := range stanzas {
		if len(s.words) < len(words) {
			continue
		}
		match := true
		for i, w := range words {
			if s.words[i] != w {
				match = false
				break
			}
		}
		if match {
			out = append(out, s)
		}
	}
	return out
}
